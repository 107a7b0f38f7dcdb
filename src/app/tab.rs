//! The tabs, in the order Tab and BackTab step through them.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tab {
    Overview,
    Queues,
    Pfc,
    Congestion,
    Latency,
    Log,
}

impl Tab {
    /// How many tabs there are: the length of every per-tab table.
    pub const COUNT: usize = 6;

    pub const ALL: [Tab; Tab::COUNT] = [
        Tab::Overview,
        Tab::Queues,
        Tab::Pfc,
        Tab::Congestion,
        Tab::Latency,
        Tab::Log,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Tab::Overview => "Overview",
            Tab::Queues => "Queues",
            Tab::Pfc => "PFC",
            Tab::Congestion => "ECN/CNP",
            Tab::Latency => "Latency",
            Tab::Log => "Log",
        }
    }

    pub fn index(self) -> usize {
        Tab::ALL.iter().position(|t| *t == self).unwrap_or(0)
    }

    pub(super) fn step(self, by: isize) -> Tab {
        let n = Tab::ALL.len() as isize;
        Tab::ALL[((self.index() as isize + by).rem_euclid(n)) as usize]
    }
}
