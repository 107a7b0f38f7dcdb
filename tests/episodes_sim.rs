//! The episode detector against the demo simulator's truth: 30 simulated minutes, headless, every
//! poll through `App::update` as the live screen gets it. Every injected episode must be found
//! with its culprit port and node named and its start within 5 s; none may open in the quiet
//! stretches between. Precision and recall are printed (`--nocapture`) for the notes.

#[path = "support/feed.rs"]
mod feed;

use feed::{Lab, T0};
use rocetop::app::episodes::Layer;
use rocetop::collect::demo::sim::CULPRIT_PORT;

#[test]
fn thirty_minutes_of_demo_every_injected_episode_found_and_none_in_quiet() {
    let mut lab = Lab::new();
    let minutes = 30;
    lab.run(minutes * 60);
    let truth = lab.sim.injected(minutes * 60_000);
    assert!(
        truth.len() >= 35,
        "the demo injects an episode every ~45 s: {}",
        truth.len()
    );
    let behind = lab.app.links.behind_names("NX_AI_Leaf1", CULPRIT_PORT);
    assert_eq!(behind, ["ubunturdma6"], "the reference port map");
    let found: Vec<_> = lab.app.episodes.all().into_iter().rev().collect();
    let mut matched = vec![false; found.len()];
    let mut hits = 0;
    let mut misses = Vec::new();
    for inj in &truth {
        let (s, e) = (T0 + inj.start_ms, T0 + inj.end_ms);
        let m = found
            .iter()
            .position(|ep| ep.start <= e && ep.end.unwrap_or(i64::MAX) >= s);
        let Some(i) = m else {
            misses.push(format!("not found: {inj:?}"));
            continue;
        };
        matched[i] = true;
        let ep = found[i];
        let off = (ep.start - s).abs();
        let culprit = ep.culprit.as_ref().map(|(_, p)| p.as_str());
        let storm = ep
            .chain
            .iter()
            .any(|p| p.layer == Layer::Pfc && p.key.contains(" ii1/1/"));
        if off <= 5000 && culprit == Some(CULPRIT_PORT) && ep.culprit_nodes == behind && storm {
            hits += 1;
        } else {
            misses.push(format!(
                "episode at +{} s: start off by {off} ms, culprit {culprit:?} {:?}, ii storm {storm}",
                inj.start_ms / 1000,
                ep.culprit_nodes
            ));
        }
    }
    let false_pos: Vec<String> = found
        .iter()
        .zip(&matched)
        .filter(|(_, m)| !**m)
        .map(|(ep, _)| {
            format!(
                "+{} s: {:?}",
                (ep.start - T0) / 1000,
                ep.chain.first().map(|p| &p.key)
            )
        })
        .collect();
    let precision = (found.len() - false_pos.len()) as f64 / found.len().max(1) as f64;
    let recall = hits as f64 / truth.len() as f64;
    println!(
        "injected {} found {} exact {hits}: precision {precision:.3} recall {recall:.3}",
        truth.len(),
        found.len()
    );
    assert!(misses.is_empty(), "{misses:#?}");
    assert!(
        false_pos.is_empty(),
        "opened in quiet stretches: {false_pos:#?}"
    );
    // The Overview's sentence for the last closed episode names the chain.
    let last = lab.app.episodes.closed.back().expect("a closed episode");
    let line = rocetop::app::episodes::text::line(last, &lab.app.links, lab.now());
    for want in [
        "Episode",
        "step ",
        "→",
        "PFC storm",
        "ii1/1/1-6",
        "MMU drops Ethernet1/1/2 → ubunturdma6",
        "DCQCN not absorbing",
    ] {
        assert!(line.contains(want), "{want:?} missing in {line}");
    }
}
