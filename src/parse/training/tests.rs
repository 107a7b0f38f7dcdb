use super::*;

fn feed_all(p: &mut LineParser, lines: &[&str]) -> Vec<TrainRecord> {
    let mut out = Vec::new();
    for l in lines {
        out.extend(p.feed(l).records);
    }
    out
}

#[test]
fn megatron_iteration_waits_for_its_timer_line() {
    let mut p = LineParser::new(Vec::new());
    let it = " iteration        3/    1000 | elapsed time per iteration (ms): 124362.2 | lm loss: 2.1E+00 |";
    assert!(p.feed(it).records.is_empty());
    let out = p.feed(
        "time (ms) | backward-params-all-reduce: 26.84 | backward-embedding-all-reduce: 4213.17",
    );
    assert!(out.recognised);
    assert_eq!(out.records.len(), 1);
    let r = out.records[0];
    assert_eq!((r.iteration, r.loss), (Some(3), Some(2.1)));
    assert!(
        r.allreduce_seconds
            .is_some_and(|s| (s - 4.24001).abs() < 1e-9)
    );
}

#[test]
fn a_waiting_record_is_released_by_the_next_one_or_by_silence() {
    let mut p = LineParser::new(Vec::new());
    let it = |n: u32| format!(" iteration {n}/ 9 | elapsed time per iteration (ms): 100.0 |");
    assert!(p.feed(&it(1)).records.is_empty());
    let out = p.feed(&it(2));
    assert_eq!(
        out.records.iter().map(|r| r.iteration).collect::<Vec<_>>(),
        vec![Some(1)]
    );
    let mut released = Vec::new();
    for _ in 0..=MAX_PENDING_LINES {
        released.extend(p.feed("some free text").records);
    }
    assert_eq!(released.len(), 1);
    assert_eq!(released[0].iteration, Some(2));
    assert!(p.pending.is_none());
    assert!(p.flush().is_empty());
}

#[test]
fn deepspeed_step_line_merges_with_its_throughput_line() {
    let mut p = LineParser::new(Vec::new());
    let recs = feed_all(
        &mut p,
        &[
            "[2023-12-29 13:02:49,647] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, lr=[0.0003], mom=[(0.9, 0.999)]",
            "[2023-12-29 13:02:49,654] [INFO] [timer.py:260:stop] epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=110.8, CurrSamplesPerSec=111.3, MemAllocated=1.87GB",
        ],
    );
    assert_eq!(recs.len(), 1);
    assert_eq!(
        (recs[0].iteration, recs[0].samples_per_second, recs[0].rank),
        (Some(10), Some(111.3), Some(0))
    );
}

#[test]
fn a_timer_line_without_an_iteration_is_a_record_of_its_own() {
    let mut p = LineParser::new(Vec::new());
    let out = p.feed("[1,2]<stdout>:time (ms) | backward-params-all-reduce: 500.0 | optimizer: 3");
    assert_eq!(out.records.len(), 1);
    assert_eq!(out.records[0].allreduce_seconds, Some(0.5));
    assert_eq!(out.records[0].rank, Some(2));
}

#[test]
fn multi_line_timer_block_completes_the_iteration() {
    let mut p = LineParser::new(Vec::new());
    let recs = feed_all(
        &mut p,
        &[
            "[2026-01-16 07:32:24] iteration        5/     100 | elapsed time per iteration (ms): 15800.0 | lm loss: 1.344240E+01 |",
            "(min, max) time across ranks (ms):",
            "    forward-backward ...............................: (3486.52, 3486.84)",
            "    all-grads-sync .................................: (13.67, 14.04)",
            "    layernorm-grads-all-reduce .....................: (0.02, 0.03)",
            "[2026-01-16 07:32:39] iteration        6/     100 | elapsed time per iteration (ms): 15639.0 |",
        ],
    );
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].iteration, Some(5));
    assert!(
        recs[0]
            .allreduce_seconds
            .is_some_and(|s| (s - 0.01407).abs() < 1e-12)
    );
    let rest = p.flush();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].allreduce_seconds, None);
}

#[test]
fn state_stays_bounded() {
    let mut p = LineParser::new(Vec::new());
    for i in 0..2_000u32 {
        p.feed(&format!("[rank{i}]: Traceback (most recent call last):"));
        p.feed(&format!("[rank{i}]: step={i}, skipped=0"));
        p.feed("(min, max) time across ranks (ms):");
        p.feed("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong");
        p.feed("        1024           256     float     sum      -1    75.18    0.01    0.03      0    78.30    0.01    0.02      0");
    }
    assert!(p.tracebacks_open() <= 64);
    assert!(
        p.pending
            .as_ref()
            .is_none_or(|q| q.age <= MAX_PENDING_LINES)
    );
}

#[test]
fn samples_carry_node_log_and_rank() {
    let rec = TrainRecord {
        iteration: Some(7),
        loss: Some(1.5),
        rank: Some(3),
        ..TrainRecord::default()
    };
    let s = record_samples(&rec, "n1", "train");
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].key.name, names::TRAIN_ITERATION);
    assert_eq!(s[0].key.label("rank"), Some("3"));
    assert_eq!(s[1].key.label("log"), Some("train"));
    assert_eq!(s[1].key.label("node"), Some("n1"));
}

#[test]
fn huge_lines_are_cut() {
    let mut p = LineParser::new(Vec::new());
    let line = format!("loss: 1.0 {}", "é".repeat(MAX_LINE_BYTES));
    assert_eq!(p.feed(&line).records.len(), 1);
}

#[test]
fn binary_junk_lines_give_no_records() {
    // Found by tests/parse/faults_parse.rs: 50 MB of random bytes gave a step time of 8 s.
    let p = parse_text("\u{4}\u{fffd}S=-% step_time_ms=250 step=3\u{1}\n", "n", "l");
    assert!(p.samples.is_empty(), "{:?}", p.samples);
    let p = parse_text("\u{1b}[32mstep_time_ms=250 step=3\u{1b}[0m\r\n", "n", "l");
    assert!(!p.samples.is_empty(), "colour and CRLF are text");
}

#[test]
fn a_diverged_loss_is_recorded_and_an_underflow_is_no_zero() {
    let mut p = LineParser::new(Vec::new());
    let recs = feed_all(
        &mut p,
        &[
            "Iteration 10 | Loss: nan | Total: 156.3ms",
            "step 11 loss=inf step_time=1e-400ms",
            "{'loss': -Infinity, 'epoch': inf}",
        ],
    );
    assert_eq!(recs.len(), 3, "{recs:?}");
    assert!(recs[0].loss.is_some_and(f64::is_nan));
    assert!(
        recs[0]
            .step_seconds
            .is_some_and(|s| (s - 0.1563).abs() < 1e-12)
    );
    assert_eq!(recs[1].loss, Some(f64::INFINITY));
    assert_eq!(recs[1].step_seconds, None, "1e-400ms is not a step of 0");
    assert_eq!(recs[2].loss, Some(f64::NEG_INFINITY));
    assert_eq!(recs[2].epoch, None, "only a loss may be non-finite");
    // `nan` inside a word is no value.
    let none = feed_all(&mut p, &["loss: nano 3"]);
    assert!(
        none.iter().all(|r| r.loss.is_none_or(f64::is_finite)),
        "{none:?}"
    );
}

#[test]
fn nccl_transport_lines_become_info_samples() {
    let text = "node1:11:12 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE ; OOB ens1:10.0.0.1<0>\n\
                node2:21:22 [0] NCCL INFO NET/Socket : Using [0]ens1:10.0.0.2<0>\n";
    let p = parse_text(text, "n", "l");
    let info = |t: &str, d: &str| {
        p.find(
            names::NCCL_TRANSPORT_INFO,
            &[("transport", t), ("device", d)],
        )
    };
    assert_eq!(
        info("ib_roce", "mlx5_0:1"),
        Some(crate::metrics::Value::Gauge(1.0))
    );
    assert_eq!(
        info("socket", "ens1"),
        Some(crate::metrics::Value::Gauge(1.0))
    );
    assert!(!p.notes.iter().any(|n| n.contains("no training progress")));
}

/// Newer frameworks' formats (NeMo 2, MaxText, Lightning's tqdm bar, MetricLogger): one record per
/// step line with the train loss (never `val_loss`, `lm_loss` twice or a perplexity), the step
/// printed without a key, and the step time the framework states.
#[test]
fn framework_step_lines() {
    let mut p = LineParser::new(Vec::new());
    let recs = feed_all(
        &mut p,
        &[
            "Training epoch 0, iteration 120/149 | lr: 3e-05 | consumed_samples: 121 | global_batch_size: 1 | global_step: 120 | reduced_train_loss: 1.233 | train_step_timing in s: 0.03146 | val_loss: 4.106",
            "I0811 21:54:55.531340 138304841739136 metric_logger.py:226] completed step: 1, seconds: 0.631, TFLOP/s/device: 5688.282, Tokens/s/device: 311629.521, total_weights: 1572864, loss: 12.979, lm_loss: 12.979, perplexity: 433358.281",
            "Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.072, v_num=193315]",
            "Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=9.947, v_num=193315] ",
            "Validation DataLoader 0: 100%|██████████| 5/5 [00:01<00:00,  3.20it/s]",
            "Epoch: [0]  [ 103/5005]  eta: 4:43:31  lr: 0.1  img/s: 13.62830983555788  loss: 6.8536 (6.9458)  acc1: 0.0000 (0.2103)  acc5: 0.0000 (0.9916)  time: 2.5401  data: 0.0336  max mem: 3524",
        ],
    );
    let got: Vec<_> = recs
        .iter()
        .map(|r| (r.iteration, r.loss, r.step_seconds, r.samples_per_second))
        .collect();
    assert_eq!(
        got,
        vec![
            (Some(120), Some(1.233), Some(0.03146), None),
            (Some(1), Some(12.979), Some(0.631), None),
            (Some(4), Some(10.072), Some(4.47), None),
            (Some(4), Some(9.947), Some(4.47), None),
            (
                Some(103),
                Some(6.8536),
                Some(2.5401),
                Some(13.62830983555788)
            ),
        ]
    );
    assert!(p.flush().is_empty());
}

/// DeepSpeed-Chat: the reward evaluation's `chosen: .., rejected: .., loss: ..` is no step; the RLHF
/// step line (`epoch: 0|step: 9|...`) takes its step time and samples/s from the `|E2E latency=`
/// line after it; `Latency: 0.27s, ... Samples/sec: 7.28` is a step of its own.
#[test]
fn deepspeed_chat_eval_blocks_and_step_lines() {
    let mut p = LineParser::new(Vec::new());
    let recs = feed_all(
        &mut p,
        &[
            "***** Evaluating rewards, Epoch 1/1 *****",
            "chosen: 0.0, rejected: 0.0, loss: 0.693359375",
            "Beginning of Epoch 1/1, Total Micro Batches 4708",
            "Model Parameters: 0.331 B, Latency: 0.27s, TFLOPs: 1.02, Samples/sec: 7.28, Time/seq 0.14s, Batch Size: 2, Sequence Length: 512",
            "epoch: 0|step: 9|ppo_ep: 1|act_loss: 0.2998046875|cri_loss: 0.1658935546875|unsuper_loss: 0.0",
            "average reward score: -0.07635498046875",
            "-------------------------------------------------------------------------------------",
            "|E2E latency=3.88s |Gather latency=0.00s (0.00%) |Generate time=2.54s (65.36%) |Training time=1.12s (28.88%) |Others=0.22 (5.75%)|CurSamplesPerSec=16.50 |AvgSamplesPerSec=15.06",
        ],
    );
    let got: Vec<_> = recs
        .iter()
        .map(|r| (r.iteration, r.loss, r.step_seconds, r.samples_per_second))
        .collect();
    assert_eq!(
        got,
        vec![
            (None, None, Some(0.27), Some(7.28)),
            (Some(9), None, Some(3.88), Some(16.5)),
        ]
    );
    // HF Trainer with two ranks: the other rank's training dicts follow an eval banner.
    let mut p = LineParser::new(Vec::new());
    let recs = feed_all(
        &mut p,
        &[
            "***** Running Evaluation *****",
            "{'loss': 2.847, 'grad_norm': 3.82, 'learning_rate': 5e-05, 'epoch': 0.1}",
        ],
    );
    assert_eq!(recs.first().and_then(|r| r.loss), Some(2.847));
}

/// MetricLogger's evaluation block (`Test:  [i/n] ... loss: ...`, `* Acc@1 ... loss 0.445`) gives no
/// step; the next epoch's lines do.
#[test]
fn metric_logger_test_lines_are_no_steps() {
    let mut p = LineParser::new(Vec::new());
    let recs = feed_all(
        &mut p,
        &[
            "Test:  [95/96]  eta: 0:00:00  loss: 0.3713 (0.4449)  acc1: 89.0625 (88.3813)  acc5: 96.8750 (96.7790)  time: 0.2695  data: 0.2401  max mem: 5990",
            "Test: Total time: 0:00:33 (0.3496 s / it)",
            "* Acc@1 88.381 Acc@5 96.779 loss 0.445",
            "Epoch: [51]  [ 0/31]  eta: 0:00:53  lr: 0.000755  loss: 0.0098 (0.0098)  time: 1.7375  data: 1.6695  max mem: 5990",
        ],
    );
    let got: Vec<_> = recs.iter().map(|r| (r.iteration, r.loss)).collect();
    assert_eq!(got, vec![(Some(0), Some(0.0098))]);
}

fn read_all(text: &str) -> Vec<TrainRecord> {
    let mut p = LineParser::new(Vec::new());
    p.prescan(text);
    let mut out = Vec::new();
    for l in text.lines() {
        out.extend(p.feed(l).records);
    }
    out.extend(p.flush());
    out
}

#[test]
fn a_step_header_and_its_block_are_one_record() {
    let text = "Step 100:\n  loss: 2.31\n  lr: 0.0001\n  time(ms): 120\n\n\
                Step 101:\n  train loss: 2.29\n  time(ms): 118\nsaving\n";
    let r = read_all(text);
    assert_eq!(r.len(), 2, "{r:#?}");
    assert_eq!((r[0].iteration, r[0].loss), (Some(100), Some(2.31)));
    assert!(r[0].step_seconds.is_some_and(|s| (s - 0.12).abs() < 1e-12));
    assert_eq!((r[1].iteration, r[1].loss), (Some(101), Some(2.29)));
    // A pretty-printed JSON record is a block too.
    let r = read_all("{\n  \"global_step\": 7,\n  \"loss\": 1.5,\n  \"lr\": 0.1\n}\n");
    assert_eq!(r.len(), 1, "{r:#?}");
    assert_eq!((r[0].iteration, r[0].loss), (Some(7), Some(1.5)));
}

#[test]
fn a_lone_key_value_line_stays_its_own_record() {
    let r = read_all("loss: 2.5\nloss: 2.4\n");
    assert_eq!(
        r.iter().map(|r| r.loss).collect::<Vec<_>>(),
        vec![Some(2.5), Some(2.4)]
    );
}

#[test]
fn column_records_and_longer_loss_names() {
    // fairseq's simple log format: `| key value |` columns, the step as num_updates
    let r = read_all(
        "epoch 001:    100 / 1563 loss=9.012, nll_loss=8.9, ppl=478.6, wps=12345, num_updates=100, lr=1e-05, wall=50\n\
         | epoch 001 | loss 7.951 | nll_loss 6.01 | ppl 64.5 | num_updates 500 | train_wall 230\n",
    );
    assert_eq!(r.len(), 2, "{r:#?}");
    assert_eq!(
        (r[0].iteration, r[0].loss, r[0].epoch),
        (Some(100), Some(9.012), Some(1.0))
    );
    assert_eq!((r[1].iteration, r[1].loss), (Some(500), Some(7.951)));
    let r =
        read_all("step 3 | batch avg loss 1.25 | loss scale 65536\nstep=4 loss/train/total=0.5\n");
    assert_eq!(
        r.iter().map(|r| r.loss).collect::<Vec<_>>(),
        vec![Some(1.25), Some(0.5)]
    );
}

#[test]
fn per_step_times_and_keras_bars() {
    let r = read_all(
        "1875/1875 [==============================] - 5s 3ms/step - loss: 0.2606 - accuracy: 0.9250\n",
    );
    assert_eq!((r[0].iteration, r[0].loss), (Some(1875), Some(0.2606)));
    assert!(r[0].step_seconds.is_some_and(|s| (s - 0.003).abs() < 1e-12));
    let r = read_all(
        "ep 55 train, step 1347, ce 0.324, mem_usage:cuda:0 67.8GB, 0.855 sec/step, elapsed 0:16:59\n",
    );
    assert_eq!(
        (r[0].iteration, r[0].step_seconds),
        (Some(1347), Some(0.855))
    );
}

#[test]
fn evaluation_lines_are_no_steps() {
    for l in [
        "| epoch 001 | valid on 'valid' subset | loss 7.9 | nll_loss 6 | num_updates 500",
        "step 250: train loss 1.9700, val loss 2.0800",
        "Evaluating: step 100 loss 2.1",
        "[eval] step: 100 loss: 2.1",
        "2024-01-01 12:00:00 | INFO | valid | epoch 002 | loss 6.1 | num_updates 1000",
        "{'eval_loss': 0.52, 'eval_runtime': 1.2, 'epoch': 1.0}",
    ] {
        let r = read_all(l);
        assert!(r.is_empty(), "{l}: {r:?}");
    }
    // A note about the last evaluation on a training line does not make it one.
    let r = read_all(
        "Ep 1 | iter 1 | step 1: loss train (curr): 1.657, val (prev val iter): None | iter time: 298.27 ms",
    );
    assert_eq!(r[0].loss, Some(1.657));
}

#[test]
fn hard_wrapped_records_are_joined_wherever_cut() {
    let recs: Vec<String> = (0..6)
        .map(|i| format!("step: {i} | loss: 2.{i}5 | time(ms): 12{i}.5 | samples/s: 1{i}.25"))
        .collect();
    let whole = read_all(&(recs.join("\n") + "\n"));
    assert_eq!(whole.len(), 6);
    for width in [24, 25, 29, 31, 37, 40] {
        let mut text = String::new();
        for r in &recs {
            let chars: Vec<char> = r.chars().collect();
            for piece in chars.chunks(width) {
                text.push_str("0: ");
                text.extend(piece);
                text.push('\n');
            }
        }
        let mut got = read_all(&text);
        for r in &mut got {
            assert_eq!(r.rank, Some(0));
            r.rank = None;
        }
        assert_eq!(got, whole, "width {width}:\n{text}");
    }
}

#[test]
fn bracketed_groups_name_their_keys() {
    // icefall: the batch's own loss, then the running total's
    let r = read_all(
        "2022-04-21 06:21:16,518 INFO [train.py:518] Epoch 0, batch 500, loss[ctc_loss=0.7647, att_loss=0.7367, loss=0.7423, over 2223 frames.], tot_loss[ctc_loss=1.098, att_loss=1.086, loss=1.088, over 438207.72270125535 frames.], batch size: 8\n",
    );
    assert_eq!(r.len(), 1, "{r:#?}");
    assert_eq!((r[0].iteration, r[0].loss), (Some(500), Some(0.7423)));
}

#[test]
fn two_word_steps_and_more_names() {
    let r = read_all("INFO:tensorflow:global step 2: loss = 72.8609 (17.053 sec/step)\n");
    assert_eq!(
        (r[0].iteration, r[0].loss, r[0].step_seconds),
        (Some(2), Some(72.8609), Some(17.053))
    );
    let r = read_all(
        "INFO 2021-12-02 18:52:20,806 log_hooks.py: 277: Rank: 0; [ep: 0] iter: 57; lr: 0.71785; loss: 2.94718; btime(ms): 192; eta: 0:00:08; peak_mem(M): 4176;\n",
    );
    assert_eq!(
        (r[0].iteration, r[0].loss, r[0].rank),
        (Some(57), Some(2.94718), Some(0))
    );
    assert!(r[0].step_seconds.is_some_and(|s| (s - 0.192).abs() < 1e-12));
    let r = read_all("268/446 (epoch 0), train_loss = 2.097, time/batch = 0.194\n");
    assert_eq!(
        (r[0].iteration, r[0].loss, r[0].step_seconds),
        (Some(268), Some(2.097), Some(0.194))
    );
    // Keras' epoch line with its validation figures is still the step's
    let r = read_all(
        "1562/1562 [==============================] - 484s - loss: 0.7744 - acc: 0.7344 - val_loss: 0.6673 - val_acc: 0.7737\n",
    );
    assert_eq!((r[0].iteration, r[0].loss), (Some(1562), Some(0.7744)));
}

#[test]
fn glued_records_without_units_and_steps_after_a_log_level() {
    let r = read_all(
        "Epoch: 0, Step: 77, Rank: 3, loss = 0.95703125Epoch: 0, Step: 77, Rank: 1, loss = 0.71484375\n",
    );
    assert_eq!(
        r.iter().map(|r| (r.rank, r.loss)).collect::<Vec<_>>(),
        vec![(Some(3), Some(0.95703125)), (Some(1), Some(0.71484375))]
    );
    let r = read_all("00:20:21 SUCCESS Step 0 | Time: 60.98s | Loss: 0.0000 | ...\n");
    assert_eq!((r[0].iteration, r[0].step_seconds), (Some(0), Some(60.98)));
    // still no step from prose
    assert!(read_all("saving at step 5\n").is_empty());
}
