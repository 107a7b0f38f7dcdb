//! Where each abnormal signal goes: the open episode whose place it is at, a new episode at a new
//! place, or none yet; and what it adds to the episode it joins. docs/user-guide.md
//! ("Episodes") has the rule in words.

use super::*;

impl Episodes {
    /// Which open episode each abnormal signal of this instant joins (its index in `opened`),
    /// opening a new one where a new place meets the opening rule; `None`: none (yet).
    /// docs/user-guide.md ("Episodes") has the rule in words.
    pub(super) fn route(&mut self, now: &Instant, o: &Obs, links: &Links) -> Vec<Option<usize>> {
        let Instant {
            abnormal,
            keys,
            prev,
            at,
            ..
        } = *now;
        use place::{Place, Spot};
        let key = |i: usize| &keys[abnormal[i].val.key.clone()];
        let mut to: Vec<Option<usize>> = vec![None; abnormal.len()];
        for op in &mut self.opened {
            op.by_key.fit(&op.ep);
        }
        let mut places: Vec<Place> = (self.opened.iter())
            .map(|op| Place::of(&op.ep, links))
            .collect();
        // A part of an open episode stays in it while the episode is under way (something of it
        // abnormal at the previous evaluation), unless it is at another one's place under way
        // and not at its own (a node the first storm paused, now behind the second's culprit);
        // in an episode settling, it is placed again: a second storm on the same switch is not
        // the first one's tail.
        let active = |op: &Opened| prev.is_some_and(|p| op.ep.last_abnormal >= p);
        let mut spots: Vec<Option<Spot>> = Vec::with_capacity(abnormal.len());
        for (i, t) in to.iter_mut().enumerate() {
            *t = (0..self.opened.len()).rev().find(|&j| {
                let op = &self.opened[j];
                active(op) && op.by_key.find(&op.ep, key(i)).is_ok()
            });
            let Some(h) = *t else {
                spots.push(Some(Spot::of(abnormal[i].val.layer, key(i), links)));
                continue;
            };
            // With one episode open there is nowhere else to go (and nothing to look up).
            if self.opened.len() > 1 {
                let s = Spot::of(abnormal[i].val.layer, key(i), links);
                if matches!(s, Spot::At { .. }) && !places[h].touches(&s) {
                    let there = (0..places.len()).filter(|&k| {
                        active(&self.opened[k]) && places[k].known() && places[k].touches(&s)
                    });
                    *t = self.pick(there, at).or(*t);
                }
            }
            spots.push(None);
        }
        let was_open = !self.opened.is_empty();
        let mut new: Vec<usize> = Vec::new();
        // Located signals (a port with nodes behind it, a paused node) first: those no open
        // episode takes make a new place; the others are placed once it is open (a new storm
        // takes what goes abnormal with it, at an older one's place too).
        let mut placed_later: Vec<usize> = Vec::new();
        for (i, spot) in spots.iter().enumerate() {
            if let Some(s @ Spot::At { .. }) = spot {
                match self.join(s, &places, at) {
                    Some(_) => placed_later.push(i),
                    None => new.push(i),
                }
            }
        }
        // With nothing open, everything abnormal counts toward the first episode, as one.
        if !was_open {
            new.extend((0..abnormal.len()).filter(|&i| !matches!(spots[i], Some(Spot::At { .. }))));
            new.sort_unstable();
        }
        if !new.is_empty() {
            let layers: std::collections::BTreeSet<Layer> =
                new.iter().map(|&i| abnormal[i].val.layer).collect();
            let held = new.iter().any(|&i| abnormal[i].since + 1000 <= at);
            // Beside an open episode, a new place has to be a congestion point of its own, not
            // a late or stray sign of the storm already told (a lone drop, a host crossing its
            // threshold late).
            let own = !was_open || {
                let at_new = new.iter().filter_map(|&i| spots[i].as_ref());
                let onsets: Vec<_> = self.opened.iter().map(|op| &op.onset).collect();
                place::stands_out(at_new, o, links, &onsets)
            };
            if (layers.len() >= 2 || held) && own {
                let start = new.iter().map(|&i| abnormal[i].since).min().unwrap_or(at);
                self.next_id += 1;
                self.opened.push(Opened {
                    ep: Episode::new(self.next_id, start, at),
                    by_key: ChainOrderCache::default(),
                    onset: Default::default(),
                });
                places.push(Place::default());
                let j = self.opened.len() - 1;
                for &i in &new {
                    to[i] = Some(j);
                }
            } else if !own {
                // Not a place of its own: a sign of the storm already told (a congested port
                // dropping late), told in it rather than lost.
                for &i in &new {
                    to[i] = self.worst_index();
                }
            }
        }
        if self.opened.is_empty() {
            return to;
        }
        for i in placed_later {
            if let Some(s) = &spots[i] {
                to[i] = self.join(s, &places, at);
            }
        }
        // The storm's spread (an internal port's PFC, an RTT pair) joins the episode its place
        // touches, else one in its onset, else the most severe: it never opens one beside
        // another.
        for (i, spot) in spots.iter().enumerate() {
            if let (None, Some(s @ (Spot::Switch(_) | Spot::Pair(_)))) = (to[i], spot) {
                to[i] = self.join(s, &places, at).or_else(|| self.worst_index());
            }
        }
        // Fabric-wide signals (step, all-reduce, ECN, CNP) join the open episode with the most
        // signals now, on a tie the newest.
        let mut counts = vec![0usize; self.opened.len()];
        for j in to.iter().flatten() {
            counts[*j] += 1;
        }
        let owner = (0..counts.len()).max_by_key(|&j| (counts[j], j));
        for (i, spot) in spots.iter().enumerate() {
            if to[i].is_none() && matches!(spot, Some(Spot::Wide)) {
                to[i] = owner;
            }
        }
        to
    }

    /// The open episode a new signal at `spot` joins: one whose place it touches, else the
    /// newest in its onset ([`ONSET_MS`]).
    fn join(&self, spot: &place::Spot, places: &[place::Place], at: Ts) -> Option<usize> {
        let n = self.opened.len();
        let touching = (0..n).filter(|&j| places.get(j).is_some_and(|p| p.touches(spot)));
        self.pick(touching, at).or_else(|| {
            (0..n)
                .rev()
                .find(|&j| at - self.opened[j].ep.start < ONSET_MS)
        })
    }

    /// Of the open episodes `of` (indices in `opened`), the newest in its onset, else the most
    /// severe.
    fn pick(&self, of: impl Iterator<Item = usize> + Clone, at: Ts) -> Option<usize> {
        let ep = |j: usize| &self.opened[j].ep;
        (of.clone())
            .filter(|&j| at - ep(j).start < ONSET_MS)
            .max()
            .or_else(|| of.max_by_key(|&j| ep(j).severity()))
    }

    /// Where the most severe open episode is in `opened`.
    fn worst_index(&self) -> Option<usize> {
        (0..self.opened.len()).max_by_key(|&j| self.opened[j].ep.severity())
    }
}

/// How long after its start an episode takes in whatever else goes abnormal, wherever it is:
/// a storm's backpressure pauses the rest of the fabric within a few seconds of its culprit
/// (the lab's reach every host in about 3 s). A new place after that is a new episode.
pub const ONSET_MS: i64 = 5000;

/// Fold this episode's signals of the instant `now` (`abnormal`, of `now.abnormal`) into it, and
/// the training time lost where `costs`; `by_key` is kept between instants ([`ChainOrderCache`]).
pub(super) fn record(
    ep: &mut Episode,
    abnormal: &[&Abnormal],
    now: &Instant,
    o: &Obs,
    costs: bool,
    signals: &[Signals; LAYERS],
    by_key: &mut ChainOrderCache,
) {
    let Instant { keys, at, dt, .. } = *now;
    if !abnormal.is_empty() {
        ep.last_abnormal = at;
    }
    if !ep.switch_read && (!o.pfc.is_empty() || !o.drops.is_empty()) {
        ep.switch_read = true;
    }
    if abnormal.len() > ep.peak_count {
        ep.peak_count = abnormal.len();
        ep.peak_at = at;
    }
    let mut pfc_total = 0.0;
    // The chain's parts ordered by key (keys are unique in it): a storm at 512 nodes has
    // hundreds of parts, and a linear search for each abnormal signal was quadratic.
    by_key.fit(ep);
    let parts = ep.chain.len();
    for a in abnormal {
        let v = &a.val;
        if v.layer == Layer::Pfc {
            pfc_total += v.v;
        }
        let key = &keys[v.key.clone()];
        match by_key.find(ep, key) {
            Ok(j) => {
                let p = &mut ep.chain[by_key.order[j]];
                p.evals += 1;
                if v.v > p.peak {
                    p.peak = v.v;
                    p.peak_at = at;
                }
                if v.rx > p.rx_peak || v.tx > p.tx_peak {
                    p.rx_peak = p.rx_peak.max(v.rx);
                    p.tx_peak = p.tx_peak.max(v.tx);
                }
            }
            Err(j) => {
                by_key.order.insert(j, ep.chain.len());
                ep.chain.push(Part {
                    layer: v.layer,
                    key: key.to_string(),
                    first: a.since.max(ep.start),
                    base: a.base,
                    peak: v.v,
                    peak_at: at,
                    rx_peak: v.rx,
                    tx_peak: v.tx,
                    evals: 1,
                });
            }
        }
    }
    if pfc_total > ep.pfc_total_peak {
        ep.pfc_total_peak = pfc_total;
    }
    // Only a new part moves a part's place (first, layer and key never change).
    if ep.chain.len() > parts {
        ep.chain
            .sort_by(|a, b| (a.first, a.layer, &a.key).cmp(&(b.first, b.layer, &b.key)));
        // The new parts' places in the key order are not known: made again next time.
        by_key.made_for = None;
    } else {
        by_key.made_for = Some(ChainOrderKey {
            episode: ep.id,
            parts: ep.chain.len(),
        });
    }
    // Training cost: how much slower each second of the episode ran than the baseline, counted
    // once, in the episode the fabric-wide signals went to.
    if !costs {
        return;
    }
    let base = signals[Layer::Training as usize]
        .get("step")
        .and_then(Signal::median);
    if let (Some(b), Some(s)) = (base, o.step_s) {
        if s > b && s > 0.0 {
            ep.lost_s += (1.0 - b / s) * dt as f64 / 1000.0;
        }
    }
}

#[cfg(test)]
mod tests;
