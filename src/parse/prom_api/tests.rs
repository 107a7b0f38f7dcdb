use super::*;

/// One answer on one line, as the collector stores it.
fn vector(items: &str) -> String {
    let items = items.replace('\n', " ");
    format!(r#"{{"status":"success","data":{{"resultType":"vector","result":[{items}]}}}}"#)
}

#[test]
fn node_exporter_and_rdma_exporter_names_map_onto_ours() {
    let text = format!(
        "# query node_infiniband\n{}\n# query rdma_exporter\n{}\n",
        vector(
            r#"{"metric":{"__name__":"node_infiniband_np_cnp_packets_sent_total","device":"mlx5_0","port":"1","instance":"gpu1:9100","rocetop_node":"gpu1"},"value":[1700000000,"42"]},
               {"metric":{"__name__":"node_ethtool_received_prio3_pause_duration","device":"ens1f0","rocetop_node":"gpu1"},"value":[1700000000,"1500"]}"#
        ),
        vector(
            r#"{"metric":{"__name__":"rdma_roce_pfc_pause_frames_total","device":"mlx5_1","port":"1","netdev":"ens2f0","direction":"tx","priority":"3","rocetop_node":"gpu2"},"value":[1700000000,"7"]},
               {"metric":{"__name__":"rdma_rp_cnp_handled_total","device":"mlx5_1","port":"1","rocetop_node":"gpu2"},"value":[1700000000,"9"]}"#
        )
    );
    let p = parse(&text);
    assert_eq!(p.notes, Vec::<String>::new());
    assert_eq!(
        p.find(
            "rocetop_rdma_np_cnp_sent_total",
            &[("node", "gpu1"), ("device", "mlx5_0"), ("rdma_port", "1")]
        ),
        Some(Value::Counter(42))
    );
    assert_eq!(
        p.find(
            names::NIC_PFC_RX_PAUSE_DURATION,
            &[("node", "gpu1"), ("netdev", "ens1f0"), ("priority", "3")]
        ),
        Some(Value::CounterMicros(1500)),
        "µs stay µs, as the store keeps them"
    );
    assert_eq!(
        p.find(
            names::NIC_PFC_TX_PAUSE,
            &[("node", "gpu2"), ("netdev", "ens2f0"), ("priority", "3")]
        ),
        Some(Value::Counter(7))
    );
    assert_eq!(
        p.find(
            "rocetop_rdma_rp_cnp_handled_total",
            &[("node", "gpu2"), ("device", "mlx5_1")]
        ),
        Some(Value::Counter(9))
    );
}

#[test]
fn nan_inf_and_negative_are_refused_never_zero() {
    let text = vector(
        r#"{"metric":{"__name__":"rdma_np_cnp_sent_total","device":"d","port":"1","rocetop_node":"a"},"value":[1,"NaN"]},
           {"metric":{"__name__":"rdma_np_cnp_sent_total","device":"d","port":"1","rocetop_node":"b"},"value":[1,"+Inf"]},
           {"metric":{"__name__":"rdma_np_cnp_sent_total","device":"d","port":"1","rocetop_node":"c"},"value":[1,"-3"]}"#,
    );
    let p = parse(&text);
    assert!(p.samples.is_empty());
    assert!(p.notes[0].starts_with("3 samples refused"), "{:?}", p.notes);
}

#[test]
fn duplicates_from_two_exporters_keep_one_and_say_so() {
    let text = vector(
        r#"{"metric":{"__name__":"node_infiniband_np_cnp_packets_sent_total","device":"d","port":"1","rocetop_node":"a"},"value":[1,"5"]},
           {"metric":{"__name__":"rdma_np_cnp_sent_total","device":"d","port":"1","rocetop_node":"a"},"value":[1,"6"]}"#,
    );
    let p = parse(&text);
    assert_eq!(p.samples.len(), 1);
    assert_eq!(p.samples[0].value, Value::Counter(5));
    assert!(p.notes[0].contains("duplicate"), "{:?}", p.notes);
}

#[test]
fn rocetop_export_keeps_its_node_and_pause_seconds_become_microseconds() {
    let text = vector(
        r#"{"metric":{"__name__":"rocetop_nic_pfc_rx_pause_duration_seconds_total","node":"n1","netdev":"ens1","priority":"3","instance":"n1:9400","rocetop_node":"n1host"},"value":[1,"0.25"]}"#,
    );
    let p = parse(&text);
    assert_eq!(
        p.find(names::NIC_PFC_RX_PAUSE_DURATION, &[("node", "n1")]),
        Some(Value::CounterMicros(250_000))
    );
}

#[test]
fn errors_and_garbage_become_notes_not_samples() {
    let text = "# error node_ethtool: HTTP 503\n{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error\"}\nnot json\n";
    let p = parse(text);
    assert!(p.samples.is_empty());
    assert_eq!(p.notes.len(), 3, "{:?}", p.notes);
    assert!(p.notes[1].contains("parse error"));
}

#[test]
fn detection_lists_profiles_present() {
    let j = vector(
        r#"{"metric":{"__name__":"node_infiniband_np_cnp_packets_sent_total"},"value":[1,"4000"]},
           {"metric":{"__name__":"rdma_port_info"},"value":[1,"4000"]},
           {"metric":{"__name__":"up"},"value":[1,"1"]}"#,
    );
    assert_eq!(
        profiles(&j),
        Ok(vec![Profile::NodeInfiniband, Profile::RdmaExporter])
    );
    assert_eq!(profiles(&vector("")), Ok(vec![]));
    assert!(profiles("<html>").is_err());
}

/// A range answer (what the collector asks now) on one line.
fn matrix(items: &str) -> String {
    let items = items.replace('\n', " ");
    format!(r#"{{"status":"success","data":{{"resultType":"matrix","result":[{items}]}}}}"#)
}

#[test]
fn a_range_answer_reads_the_newest_scrape_of_the_last_step_and_leaves_out_missed_ones() {
    // T = 1700000030 s, step 15 s: the window is (1700000015, 1700000030].
    let text = format!(
        "# node_label instance\n# at 1700000030000 step 15000\n# query rdma_exporter\n{}\n",
        matrix(
            r#"{"metric":{"__name__":"rdma_np_cnp_sent_total","device":"d","port":"1","instance":"gpu1:9879"},"values":[[1700000003.5,"10"],[1700000018.5,"20"]]},
               {"metric":{"__name__":"rdma_np_cnp_sent_total","device":"d","port":"1","instance":"gpu2:9879"},"values":[[1700000000,"5"],[1700000015,"7"]]},
               {"metric":{"__name__":"rdma_np_cnp_sent_total","device":"d","port":"1","instance":"gpu3"},"values":[[1700000015,"1"],[1700000030,"4"]]},
               {"metric":{"__name__":"rdma_np_cnp_sent_total","device":"d","port":"1","instance":"[fe80::1]:9879"},"values":[[1700000030,"9"]]}"#
        )
    );
    let p = parse(&text);
    let cnp = "rocetop_rdma_np_cnp_sent_total";
    assert_eq!(
        p.find(cnp, &[("node", "gpu1")]),
        Some(Value::Counter(20)),
        "newest sample in the window"
    );
    // gpu2's newest scrape is at the window's left edge (Prometheus 2 includes it): not fresh.
    assert_eq!(p.find(cnp, &[("node", "gpu2")]), None);
    assert_eq!(p.find(cnp, &[("node", "gpu3")]), Some(Value::Counter(4)));
    assert_eq!(
        p.find(cnp, &[("node", "[fe80::1]")]),
        Some(Value::Counter(9))
    );
    assert_eq!(p.samples.len(), 3);
    assert_eq!(
        p.notes,
        vec![
            "1 series missed the newest scrape (target down or series stale): not shown"
                .to_string()
        ]
    );
}

#[test]
fn ports_are_stripped_like_label_replace_would() {
    assert_eq!(strip_port("gpu1:9100"), "gpu1");
    assert_eq!(strip_port("gpu1"), "gpu1");
    assert_eq!(strip_port("10.0.0.1:9100"), "10.0.0.1");
    assert_eq!(strip_port("host:http"), "host:http");
    assert_eq!(strip_port(":9100"), ":9100");
    assert_eq!(strip_port("gpu1:"), "gpu1:");
}

#[test]
fn an_answer_saved_by_hand_names_nodes_by_instance() {
    // `curl .../api/v1/query?query=rdma_np_cnp_sent_total` piped to `rocetop parse prom-api -`.
    let text = vector(
        r#"{"metric":{"__name__":"rdma_np_cnp_sent_total","device":"d","port":"1","instance":"gpu9:9879"},"value":[1,"3"]}"#,
    );
    let p = parse(&text);
    assert_eq!(
        p.find("rocetop_rdma_np_cnp_sent_total", &[("node", "gpu9")]),
        Some(Value::Counter(3))
    );
}

#[test]
fn the_history_section_maps_like_a_poll_and_stays_out_of_the_poll() {
    let text = format!(
        "# node_label instance\n# at 1700000030000 step 15000\n# query rdma_exporter\n{}\n\
         # range 1700000000000 1700000015000 step 15000\n# query node_exporter infiniband\n{}\n\
         # query rdma_exporter\n{}\n# error node_exporter ethtool: timed out after 5 s\n",
        vector(
            r#"{"metric":{"__name__":"rdma_np_cnp_sent_total","device":"mlx5_0","port":"1","instance":"gpu1:9879"},"value":[1700000030,"30"]}"#
        ),
        matrix(
            r#"{"metric":{"__name__":"node_infiniband_port_data_received_bytes_total","device":"mlx5_0","port":"1","instance":"gpu1:9100"},"values":[[1700000000,"400"],[1700000015,"800"]]},
               {"metric":{"__name__":"node_infiniband_np_cnp_packets_sent_total","device":"mlx5_0","port":"1","instance":"gpu1:9100"},"values":[[1700000000,"10"],[1700000015,"NaN"]]}"#
        ),
        // The same CNP series from a second exporter: the first profile's is kept.
        matrix(
            r#"{"metric":{"__name__":"rdma_np_cnp_sent_total","device":"mlx5_0","port":"1","instance":"gpu1:9879"},"values":[[1700000000,"99"]]}"#
        ),
    );
    let p = parse(&text);
    assert_eq!(p.samples.len(), 1, "the poll holds only its own answer");
    assert!(
        p.notes.iter().any(|n| n.starts_with("history query")),
        "{:?}",
        p.notes
    );
    let (h, notes) = history(&text);
    assert_eq!(
        notes,
        ["1 history points refused (NaN, ±Inf or negative counter)"],
        "counted"
    );
    assert_eq!(h.times, vec![1_700_000_000_000, 1_700_000_015_000]);
    let of = |name: &str| {
        h.series
            .iter()
            .find(|(k, _)| k.name == name)
            .map(|(k, v)| (k.label("node").map(str::to_string), v.clone()))
    };
    assert_eq!(
        of("rocetop_rdma_port_rcv_data_total"),
        Some((
            Some("gpu1".into()),
            vec![(0, Value::Counter(100)), (1, Value::Counter(200))]
        )),
        "node_exporter's bytes back in the file's 4-byte words"
    );
    assert_eq!(
        of("rocetop_rdma_np_cnp_sent_total"),
        Some((Some("gpu1".into()), vec![(0, Value::Counter(10))])),
        "NaN refused, the duplicate from rdma_exporter not kept"
    );
    assert_eq!(h.series.len(), 2);
}

/// Answers are read series by series; one cut off in the middle counts not at all (a note),
/// while the complete answer before it counts whole.
#[test]
fn a_cut_off_answer_counts_not_at_all() {
    let item = |node: &str| {
        format!(
            r#"{{"metric":{{"__name__":"rdma_np_cnp_sent_total","device":"d","port":"1","rocetop_node":"{node}"}},"value":[1,"5"]}}"#
        )
    };
    let whole = vector(&format!("{},{}", item("a"), item("b")));
    let cut = vector(&format!("{},{}", item("c"), item("d")));
    let cut = &cut[..cut.len() - 20];
    let p = parse(&format!(
        "# query rdma_exporter\n{whole}\n# query rocetop\n{cut}\n"
    ));
    fn key(n: &str) -> [(&'static str, &str); 3] {
        [("node", n), ("device", "d"), ("rdma_port", "1")]
    }
    let cnp = "rocetop_rdma_np_cnp_sent_total";
    assert_eq!(p.find(cnp, &key("a")), Some(Value::Counter(5)));
    assert_eq!(p.find(cnp, &key("b")), Some(Value::Counter(5)));
    assert_eq!(
        p.find(cnp, &key("c")),
        None,
        "a cut-off answer gives no series"
    );
    assert_eq!(p.samples.len(), 2);
    assert!(
        p.notes
            .iter()
            .any(|n| n.starts_with("query rocetop: not a Prometheus API answer")),
        "{:?}",
        p.notes
    );
}

/// An exporter that puts `rocetop_node` on its own series names no node by it where the
/// collector's header says which label does: the node is the configured label's, so a label
/// cannot pick the host a focus would log in to. Without the header (a recording from before
/// it, when a `label_replace` filled `rocetop_node`) it is read as before.
#[test]
fn rocetop_node_is_read_only_where_no_node_label_is_configured() {
    let answer = vector(
        r#"{"metric":{"__name__":"rdma_np_cnp_sent_total","device":"d","port":"1","instance":"gpu1:9879","rocetop_node":"gpu99.attacker.example"},"value":[1700000000,"5"]}"#,
    );
    let cnp = "rocetop_rdma_np_cnp_sent_total";
    let p = parse(&format!(
        "# node_label instance\n# query rdma_exporter\n{answer}\n"
    ));
    assert_eq!(p.find(cnp, &[("node", "gpu1")]), Some(Value::Counter(5)));
    assert_eq!(p.samples.len(), 1);
    let p = parse(&format!(
        "# node_label rocetop_node\n# query rdma_exporter\n{answer}\n"
    ));
    assert_eq!(
        p.find(cnp, &[("node", "gpu99.attacker.example")]),
        Some(Value::Counter(5)),
        "the label the config names"
    );
    let p = parse(&format!("# query rdma_exporter\n{answer}\n"));
    assert_eq!(
        p.find(cnp, &[("node", "gpu99.attacker.example")]),
        Some(Value::Counter(5)),
        "an old recording: as it was recorded"
    );
}

/// A `__name__` outside the exposition grammar (a newline spelling more series) refuses its
/// series, counted and never shown; a label name outside it is never read; the good series of
/// the same answer are kept.
#[test]
fn names_outside_the_exposition_format_are_refused_and_counted_never_shown() {
    let text = vector(
        r#"{"metric":{"__name__":"rocetop_nic_pfc_rx_pause_frames_total\nrocetop_spoofed_total{node=\"x\"} 1\n#","netdev":"e","priority":"3","node":"n1"},"value":[1,"5"]},
           {"metric":{"__name__":"rocetop_rdma_a b_total","device":"d","rdma_port":"1","node":"n1"},"value":[1,"5"]},
           {"metric":{"__name__":"rdma_np_cnp_sent_total","device":"d","port":"1","rocetop_node":"n2","k8s.pod":"p","a\nb":"c"},"value":[1,"6"]},
           {"metric":{"__name__":"rocetop_nic_pfc_rx_pause_frames_total","netdev":"e","priority":"3","node":"n1"},"value":[1,"7"]}"#,
    );
    let p = parse(&text);
    assert_eq!(p.samples.len(), 2, "{:?}", p.samples);
    assert_eq!(
        p.find(names::NIC_PFC_RX_PAUSE, &[("node", "n1")]),
        Some(Value::Counter(7))
    );
    assert_eq!(
        p.find(&names::rdma_counter("np_cnp_sent"), &[("node", "n2")]),
        Some(Value::Counter(6)),
        "an odd label name does not cost its series"
    );
    assert!(p.samples.iter().all(|s| names::is_metric_name(&s.key.name)));
    assert_eq!(
        p.notes,
        [
            "2 series refused: a metric name outside the exposition format ([a-zA-Z_:][a-zA-Z0-9_:]*)",
            "2 labels ignored: a label name outside the exposition format ([a-zA-Z_][a-zA-Z0-9_]*)"
        ]
    );
    let shown = format!("{:?}{:?}", p.notes, p.unknown_examples);
    assert!(
        !shown.contains("spoofed") && !shown.contains("a b"),
        "{shown}"
    );
    // Detection does not take a profile from such a name either.
    let j = vector(r#"{"metric":{"__name__":"rdma_x\ny"},"value":[1,"1"]}"#);
    assert_eq!(profiles(&j), Ok(vec![]));
}

/// A value no 64-bit counter holds is refused and counted, never saturated to u64::MAX; the
/// largest below it is kept.
#[test]
fn a_counter_at_or_beyond_2_64_is_refused_not_saturated() {
    let item = |node: &str, v: &str| {
        format!(
            r#"{{"metric":{{"__name__":"rdma_np_cnp_sent_total","device":"d","port":"1","rocetop_node":"{node}"}},"value":[1,"{v}"]}}"#
        )
    };
    let text = vector(&format!(
        "{},{},{},{}",
        item("a", "1e20"),
        item("b", "18446744073709551616"),
        item("c", "18446744073709549568"),
        item("d", "12")
    ));
    let p = parse(&text);
    let cnp = names::rdma_counter("np_cnp_sent");
    assert_eq!(p.find(&cnp, &[("node", "a")]), None);
    assert_eq!(p.find(&cnp, &[("node", "b")]), None);
    assert_eq!(
        p.find(&cnp, &[("node", "c")]),
        Some(Value::Counter(18_446_744_073_709_549_568))
    );
    assert_eq!(p.find(&cnp, &[("node", "d")]), Some(Value::Counter(12)));
    assert_eq!(
        p.notes,
        ["2 samples refused (a counter at or beyond 2^64: saturated, no counter holds it)"]
    );
    // Scaled into the store's unit first: 2^54 s of pause is beyond 2^64 µs.
    let pause = vector(
        r#"{"metric":{"__name__":"rocetop_nic_pfc_rx_pause_duration_seconds_total","node":"n","netdev":"e","priority":"3"},"value":[1,"18014398509481984"]}"#,
    );
    assert!(parse(&pause).samples.is_empty());
}

/// History points outside the range asked (ten years ahead, before the first step) are refused
/// and counted, the others kept; a poll's series whose samples are later than the time asked is
/// left out and the note says it cannot be placed in time.
#[test]
fn points_outside_the_time_asked_are_refused_and_said() {
    let ten_years = 10 * 365 * 86_400;
    let text = format!(
        "# node_label instance\n# at 1700000030000 step 15000\n# query rdma_exporter\n{}\n\
         # range 1700000000000 1700000015000 step 15000\n# query rdma_exporter\n{}\n",
        matrix(&format!(
            r#"{{"metric":{{"__name__":"rdma_np_cnp_sent_total","device":"d","port":"1","instance":"gpu1"}},"values":[[1700000030,"4"]]}},
               {{"metric":{{"__name__":"rdma_np_cnp_sent_total","device":"d","port":"1","instance":"gpu2"}},"values":[[1700000030,"4"],[{},"5"]]}}"#,
            1_700_000_030 + ten_years
        )),
        matrix(&format!(
            r#"{{"metric":{{"__name__":"rdma_np_cnp_sent_total","device":"d","port":"1","instance":"gpu1"}},"values":[[1699999985,"0"],[1700000000,"1"],[1700000015,"2"],[{},"9"]]}}"#,
            1_700_000_015 + ten_years
        ))
    );
    let p = parse(&text);
    let cnp = names::rdma_counter("np_cnp_sent");
    assert_eq!(p.find(&cnp, &[("node", "gpu1")]), Some(Value::Counter(4)));
    assert_eq!(p.find(&cnp, &[("node", "gpu2")]), None);
    assert_eq!(
        p.notes,
        [
            "1 series have samples later than the time asked (1700000030000 ms): the server's \
             clock or data is ahead, so they cannot be placed in time: not shown"
        ]
    );
    let (h, notes) = history(&text);
    assert_eq!(h.times, [1_700_000_000_000, 1_700_000_015_000]);
    assert_eq!(
        notes,
        [
            "2 history points outside the range asked (1700000000000..=1700000015000 ms): the \
             server's clock or data is off, so they cannot be placed in time: refused"
        ]
    );
    // A history section that does not say its range places nothing.
    let (h, notes) = history(&text.replace("# range 1700000000000 1700000015000", "# range x"));
    assert!(h.is_empty());
    assert!(notes[0].starts_with("4 history points outside the range asked (no range given)"));
}

#[test]
fn dcgm_exporter_gpus_are_gauges_under_the_node_dumps_names() {
    let text = format!(
        "# query dcgm\n{}\n",
        vector(
            r#"{"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","gpu":"3","UUID":"GPU-x","modelName":"NVIDIA L4","Hostname":"h","rocetop_node":"gpu1"},"value":[1,"0"]},
               {"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"3","rocetop_node":"gpu1"},"value":[1,"16.365000"]},
               {"metric":{"__name__":"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE","gpu":"3","rocetop_node":"gpu1"},"value":[1,"0.420000"]},
               {"metric":{"__name__":"DCGM_FI_DEV_XID_ERRORS","gpu":"3","rocetop_node":"gpu1"},"value":[1,"NaN"]},
               {"metric":{"__name__":"DCGM_FI_DEV_SM_CLOCK","gpu":"3","rocetop_node":"gpu1"},"value":[1,"210"]}"#
        )
    );
    let p = parse(&text);
    let at = [("gpu", "3"), ("node", "gpu1")];
    assert_eq!(
        p.find(names::GPU_UTILIZATION_PERCENT, &at),
        Some(Value::Gauge(0.0)),
        "an idle GPU reads 0 %, a value"
    );
    assert_eq!(
        p.find(names::GPU_POWER_WATTS, &at),
        Some(Value::Gauge(16.365))
    );
    assert_eq!(
        p.find(names::GPU_TENSOR_ACTIVE_RATIO, &at),
        Some(Value::Gauge(0.42))
    );
    assert_eq!(p.find(names::GPU_LAST_XID, &at), None, "NaN is missing");
    assert!(
        p.notes.iter().any(|n| n.contains("1 samples refused")),
        "{:?}",
        p.notes
    );
    // A field rocetop does not read is counted as not understood, never invented.
    assert_eq!(p.unknown_lines, 1);
    assert_eq!(Profile::of("DCGM_FI_DEV_GPU_UTIL"), Some(Profile::Dcgm));
}
