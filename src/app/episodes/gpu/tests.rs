use super::super::{Episodes, PortPfc, Rules, text};
use super::*;
use crate::app::pairing::Links;
use crate::config::Config;
use crate::metrics::names::{GPU_THROTTLE_ACTIVE, GPU_UTILIZATION_PERCENT};
use crate::metrics::{Parsed, Sample};

const NODES: [&str; 8] = [
    "ubunturdma1",
    "ubunturdma2",
    "ubunturdma3",
    "ubunturdma4",
    "ubunturdma5",
    "ubunturdma6",
    "ubunturdma7",
    "ubunturdma8",
];

/// The fabric at `at`: the step, the ii ports' PFC (`None`: no switch read), every node's GPUs at
/// `util` but `slow` (at `slow_util`, throttled by `reason` on GPUs 0-3 where given).
struct At {
    step: f64,
    ii_rx: Option<f64>,
    util: f64,
    slow: Option<(&'static str, f64, Option<&'static str>)>,
}

fn obs(at: Ts, a: &At) -> Obs<'static> {
    let mut o = Obs {
        at,
        step_s: Some(a.step),
        ..Default::default()
    };
    if let Some(rx) = a.ii_rx {
        for i in 1..=6 {
            o.pfc.push(PortPfc {
                switch: "NX_AI_Leaf1".into(),
                port: format!("ii1/1/{i}").into(),
                rx,
                tx: rx / 3.0,
            });
        }
    }
    for n in NODES {
        let util = match a.slow {
            Some((slow, u, _)) if slow == n => u,
            _ => a.util,
        };
        o.gpu_util.push((n.into(), util));
    }
    if let Some((node, _, Some(reason))) = a.slow {
        for g in 0..4 {
            o.gpu_throttle.push(Throttle {
                node: node.into(),
                gpu: g.to_string().into(),
                reason: reason.into(),
            });
        }
    }
    o
}

/// 30 calm seconds, then 6 of `bad`: the detector and the time after.
fn run(calm: &At, bad: &At) -> (Episodes, Links, Ts) {
    let cfg = Config::reference();
    let (rules, links) = (Rules::of(&cfg), Links::from_config(&cfg));
    let mut d = Episodes::default();
    let mut t = 0;
    for a in std::iter::repeat_n(calm, 30).chain(std::iter::repeat_n(bad, 6)) {
        t += 1000;
        d.update(&obs(t, a), &rules, &links);
    }
    (d, links, t)
}

const CALM: At = At {
    step: 0.160,
    ii_rx: Some(2.0),
    util: 93.0,
    slow: None,
};

#[test]
fn gpus_idling_in_a_storm_are_linked_after_the_step() {
    let storm = At {
        step: 0.360,
        ii_rx: Some(25_000.0),
        util: 41.0,
        slow: None,
    };
    let (d, links, t) = run(&CALM, &storm);
    let ep = d.worst_open().expect("a storm opens an episode");
    assert_eq!(ep.gpu.nodes.len(), 8);
    assert_eq!(
        util_text(ep).as_deref(),
        Some("GPU util 93→41 % on 8 nodes")
    );
    assert_eq!(throttle_text(ep), None);
    let line = text::line(ep, &links, t);
    assert!(
        line.contains("step 160→360 ms (+125%) · GPU util 93→41 % on 8 nodes · PFC storm"),
        "{line}"
    );
    // GPUs that stay busy (the wobble of a few points) are not said to idle.
    let busy = At {
        util: 88.0,
        ..storm
    };
    let (d, links, t) = run(&CALM, &busy);
    let ep = d.worst_open().expect("open");
    assert_eq!(util_text(ep), None);
    assert!(!text::line(ep, &links, t).contains("GPU"));
}

#[test]
fn a_throttled_node_on_a_calm_network_is_the_cause_not_the_network() {
    let throttled = At {
        step: 0.225,
        slow: Some(("ubunturdma8", 58.0, Some("sw_power_cap"))),
        ..CALM
    };
    let (d, links, t) = run(&CALM, &throttled);
    let ep = d.worst_open().expect("a slow step held opens an episode");
    assert!(not_the_network(ep));
    assert_eq!(ep.culprit, None, "no port is blamed");
    let line = text::line(ep, &links, t);
    assert!(
        line.contains(
            "step 160→225 ms (+41%) · ubunturdma8 GPUs 0-3 power-capped (sw_power_cap): not the network · GPU util 93→58 % on ubunturdma8"
        ),
        "{line}"
    );
    // Narrow: the cause stays when the rest goes.
    let ranked = text::ranked(ep, &links);
    let kept = text::lines(ep, &ranked, t, 60, 2).join(" ");
    assert!(kept.contains("power-capped"), "{kept}");

    // The same slow step and throttle with the network storming: the throttle is told, the
    // verdict is not.
    let both = At {
        ii_rx: Some(25_000.0),
        ..throttled
    };
    let (d, links, t) = run(&CALM, &both);
    let ep = d.worst_open().expect("open");
    assert!(!not_the_network(ep));
    let line = text::line(ep, &links, t);
    assert!(
        line.contains("ubunturdma8 GPUs 0-3 power-capped (sw_power_cap)"),
        "{line}"
    );
    assert!(!line.contains("not the network"), "{line}");

    // No switch read: the network is not known to be calm, so never "not the network".
    let unread = At {
        ii_rx: None,
        ..throttled
    };
    let calm_unread = At {
        ii_rx: None,
        ..CALM
    };
    let (d, links, t) = run(&calm_unread, &unread);
    let ep = d.worst_open().expect("open");
    assert!(!not_the_network(ep));
    let line = text::line(ep, &links, t);
    assert!(!line.contains("not the network"), "{line}");
    assert!(line.contains("switch not read"), "{line}");
}

#[test]
fn a_node_throttled_through_its_calm_is_not_news() {
    let capped = At {
        slow: Some(("ubunturdma8", 90.0, Some("sw_power_cap"))),
        ..CALM
    };
    let slow = At {
        step: 0.225,
        ..capped
    };
    let (d, links, t) = run(&capped, &slow);
    let ep = d.worst_open().expect("the slow step opens one");
    assert!(ep.gpu.throttled.is_empty(), "{:?}", ep.gpu.throttled);
    assert!(!not_the_network(ep));
    let line = text::line(ep, &links, t);
    assert!(!line.contains("power-capped"), "{line}");
}

#[test]
fn stale_and_missing_gpu_readings_are_left_out() {
    let mut st = Store::new(600_000, 16);
    let src = st.add_source("n", 1000);
    let util = |node: &str, gpu: &str, v: f64| {
        Sample::gauge(GPU_UTILIZATION_PERCENT, &[("gpu", gpu), ("node", node)], v)
    };
    let thr = |node: &str, v: f64| {
        Sample::gauge(
            GPU_THROTTLE_ACTIVE,
            &[("gpu", "0"), ("node", node), ("reason", "hw_thermal")],
            v,
        )
    };
    st.ingest(
        src,
        1_000,
        &Parsed::from(vec![util("old", "0", 10.0), thr("old", 1.0)]),
    );
    st.ingest(
        src,
        100_000,
        &Parsed::from(vec![
            util("a", "0", 90.0),
            util("a", "1", 70.0),
            util("b", "0", f64::NAN),
            thr("a", 0.0),
            thr("b", 1.0),
        ]),
    );
    let ids = EvalIdsCache::of(&st);
    let (util, throttle) = read(&st, 100_000, &ids);
    assert_eq!(
        util,
        vec![("a".into(), 80.0)],
        "the mean; NaN and stale out"
    );
    assert_eq!(
        throttle,
        vec![Throttle {
            node: "b".into(),
            gpu: "0".into(),
            reason: "hw_thermal".into()
        }]
    );
}
