//! The episode detector against the demo simulator's truth: 30 simulated minutes, headless, every
//! poll through `App::update` as the live screen gets it. Every injected episode must be found
//! with its culprit port and node named and its start within 5 s; none may open in the quiet
//! stretches between. Precision and recall are printed (`--nocapture`) for the notes.

use crate::feed;

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
    let behind = lab.app.links().behind_names("NX_AI_Leaf1", CULPRIT_PORT);
    assert_eq!(behind, ["ubunturdma6"], "the reference port map");
    let found: Vec<_> = lab.app.episodes().all().into_iter().rev().collect();
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
    let last = lab.app.episodes().closed.back().expect("a closed episode");
    let line = rocetop::app::episodes::text::line(last, lab.app.links(), lab.now());
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

/// The replay path finds the episodes the live run found: 150 s of the demo, every poll's vendor
/// text written by the recorder as a live recording is, then the file replayed through
/// `replay_feed` (which parses the text again) into a fresh App, ticking as the live one ticked.
#[test]
fn a_recording_replays_to_the_same_episodes() {
    use rocetop::app::{App, Event};
    use rocetop::record::replay::{Feed, replay_feed};

    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("lab.rec");
    let lab = record_lab(&path, 150);
    let live: Vec<_> = lab.app.episodes().all().into_iter().cloned().collect();
    assert!(
        live.len() >= 2,
        "150 s of demo hold episodes: {}",
        live.len()
    );

    let mut r = replay_feed(&path, f64::INFINITY).expect("open the recording");
    assert!(r.config_problem.is_none(), "{:?}", r.config_problem);
    let theme = rocetop::theme::Theme::named("dark").expect("theme");
    let mut app = App::new(r.config.clone(), r.new_store(), theme, T0);
    let mut last = None;
    loop {
        match r.rx.blocking_recv() {
            Some(Feed::End { .. }) | None => break,
            Some(f) => {
                let (ev, at) = r.event(f);
                if let Some(prev) = last.filter(|&p| p != at) {
                    app.update(Event::Tick, prev);
                }
                app.update(ev, at);
                last = Some(at);
            }
        }
    }
    if let Some(prev) = last {
        app.update(Event::Tick, prev);
    }
    let replayed: Vec<_> = app.episodes().all().into_iter().cloned().collect();
    assert_eq!(replayed.len(), live.len(), "episode count");
    for (a, b) in live.iter().zip(&replayed) {
        assert_eq!(a, b, "an episode differs between live and replay");
    }
}

/// `secs` seconds of the demo lab, every poll's vendor text written by the recorder as a live
/// recording is, and fed to the lab's App as it goes.
fn record_lab(path: &std::path::Path, secs: i64) -> Lab {
    use rocetop::app::Event;
    use rocetop::collect::poll::Collected;
    use rocetop::record::writer::Writer;
    let mut lab = Lab::new();
    lab.follow_log = false; // log lines reach the App only through the log source's polls
    let mut w = Writer::create(path, lab.app.cfg(), lab.sources.iter()).expect("create");
    for _ in 0..secs {
        lab.secs += 1;
        lab.sim.advance_to(lab.secs * 1000);
        let at = lab.now();
        for (name, raw, parsed) in feed::polls_raw(&mut lab) {
            let c = Collected {
                source: lab.id(&name),
                at,
                parsed,
                raw: Some(raw),
                error: None,
                history: Default::default(),
            };
            w.write(&c).expect("write");
            lab.app.update(Event::Collected(c), at);
        }
        lab.app.update(Event::Tick, at);
    }
    w.finish(lab.now()).expect("finish");
    lab
}

/// `replay --format json` carries `episodes` as `snapshot --format json` does: those the live
/// run found, every field and the sentence, beside the series and sources.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_json_carries_the_episodes_the_live_run_found() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("lab.rec");
    let lab = record_lab(&path, 110);
    let live = lab.app.episodes().all();
    assert!(
        live.len() >= 2,
        "110 s of demo hold episodes: {}",
        live.len()
    );
    let want = rocetop::app::episodes::text::json(&live, lab.app.links(), lab.now());
    // Both read back from text, as the printed document is (floats parse alike).
    let want: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&want).expect("text")).expect("json");
    let out = rocetop::cmd::record::replay_print(&path, rocetop::output::Format::Json)
        .await
        .expect("replay");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert!(doc["series"].as_array().is_some_and(|a| !a.is_empty()));
    assert!(doc["sources"].as_array().is_some_and(|a| !a.is_empty()));
    assert_eq!(doc["episodes"], want, "the live run's episodes");
    let summary = doc["episodes"][0]["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("Episode: "), "{summary}");
}
