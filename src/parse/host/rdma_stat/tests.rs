use super::*;
use crate::metrics::Value;

fn l<'a>(dev: &'a str, port: &'a str) -> [(&'static str, &'a str); 3] {
    [("node", "n"), ("device", dev), ("rdma_port", port)]
}

#[test]
fn default_layout_wrapped_anywhere_and_several_links() {
    let text = "$ rdma stat show\r\nlink mlx5_0/1 np_cnp_sent 5 rp_cnp_handled\r\n7\r\nlink mlx5_1/2\nnp_cnp_sent 9\n";
    let p = parse(text, "n");
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    assert_eq!(
        p.find("rocetop_rdma_np_cnp_sent_total", &l("mlx5_0", "1")),
        Some(Value::Counter(5))
    );
    assert_eq!(
        p.find("rocetop_rdma_rp_cnp_handled_total", &l("mlx5_0", "1")),
        Some(Value::Counter(7))
    );
    assert_eq!(
        p.find("rocetop_rdma_np_cnp_sent_total", &l("mlx5_1", "2")),
        Some(Value::Counter(9))
    );
    assert_eq!(p.samples.len(), 3);
}

#[test]
fn pretty_layout_and_32_bit_q_counters() {
    let text = "[u@h ~]$ rdma statistic show link rocep11s0/1 -p\nlink rocep11s0/1\n\tout_of_sequence 3\n\tnp_cnp_sent 4\n";
    let p = parse(text, "n");
    assert_eq!(p.unknown_lines, 0);
    let lab = l("rocep11s0", "1");
    assert_eq!(
        p.find("rocetop_rdma_out_of_sequence_total", &lab),
        Some(Value::Counter32(3))
    );
    assert_eq!(
        p.find("rocetop_rdma_np_cnp_sent_total", &lab),
        Some(Value::Counter(4))
    );
}

#[test]
fn broken_structure_is_counted_not_guessed() {
    // counters before any link, a name without value before a prompt, a non-numeric value
    let text = "np_cnp_sent 1\nlink mlx5_0/1 np_cnp_sent\n$ rdma stat\nlink mlx5_0/1 np_cnp_sent N/A\nlink nodev\n";
    let p = parse(text, "n");
    assert_eq!(p.samples, vec![]);
    assert_eq!(p.unknown_lines, 4, "{:?}", p.unknown_examples);
}

#[test]
fn json_layout() {
    let text =
        r#"[{"ifindex":2,"ifname":"mlx5_0","port":1,"np_cnp_sent":11,"rx_write_requests":3}]"#;
    let p = parse(text, "n");
    assert_eq!(p.unknown_lines, 0);
    assert_eq!(
        p.find("rocetop_rdma_np_cnp_sent_total", &l("mlx5_0", "1")),
        Some(Value::Counter(11))
    );
    assert_eq!(p.samples.len(), 2);
    // not JSON after all: read as text, counted as unknown
    assert_eq!(parse("[oops", "n").unknown_lines, 1);
}
