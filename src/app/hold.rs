//! `f`: the frozen view. Collection goes on; what arrives is held back (raw outputs dropped, log
//! lines kept) and applied in order when the view catches up.

use super::{App, Event, FROZEN_MAX, log_lines};

impl App {
    pub(super) fn hold(&mut self, ev: Event) {
        let ev = match ev {
            // Raw outputs are for recordings; the screen keeps only the log lines while held.
            Event::Collected(mut c) => {
                let lines = log_lines(&c);
                if !lines.is_empty() {
                    self.held.push_back(Event::LogLines {
                        source: c.source,
                        lines,
                    });
                }
                c.raw = None;
                Event::Collected(c)
            }
            ev => ev,
        };
        self.held.push_back(ev);
        if self.held.len() > FROZEN_MAX {
            if let Some(old) = self.held.pop_front() {
                self.apply_held(old);
            }
        }
    }

    fn apply_held(&mut self, ev: Event) {
        match ev {
            Event::Collected(c) => {
                self.take_poll(&c, true);
            }
            Event::LogLines { lines, .. } => self.push_log(lines),
            _ => {}
        }
    }

    /// `f`: freeze the view (collection goes on, held back), or catch up with everything held.
    pub fn toggle_freeze(&mut self) {
        match self.frozen {
            None => self.frozen = Some(self.now),
            Some(_) => {
                self.frozen = None;
                while let Some(ev) = self.held.pop_front() {
                    self.apply_held(ev);
                }
                self.eval_alerts();
            }
        }
    }

    /// Polls waiting for the view to unfreeze.
    pub fn held_count(&self) -> usize {
        self.held.len()
    }
}
