//! Step positions that are printed without a key, so the pair reader cannot see them:
//!
//! - a tqdm progress bar of a training loop (PyTorch Lightning, NeMo 1.x): `Epoch 0:  22%|██▏ |
//!   4/18 [00:17<01:02,  4.47s/it, loss=10.072, v_num=193315]`: the step is `4`, and the rate
//!   (`4.47s/it`, or `1.89it/s` when faster) is the step time tqdm measured;
//! - Lightning's RichProgressBar: `Epoch 4    ━━━━━━━━━━━━━━━╸━━━━ 232/291 0:00:33 • 0:00:09
//!   7.00it/s loss: 0.398` (`-` for the bar when the terminal is plain ASCII);
//! - a MetricLogger line (torchvision references, DETR, DeiT, MAE) or an mmengine/mmcv one:
//!   `Epoch: [0]  [ 103/5005]  eta: ...`, `Epoch(train) [1][10/90]  lr: ...`,
//!   `Epoch [3][50/2500]\tlr: ...`: the second bracket holds the step within the epoch.

/// The step, and the step time a progress bar states, read from `body`.
pub(super) fn read(body: &str) -> Option<(u64, Option<f64>)> {
    tqdm(body)
        .or_else(|| rich(body))
        .or_else(|| epoch_brackets(body).map(|i| (i, None)))
        .or_else(|| keras(body).map(|i| (i, None)))
}

/// Keras' bar: `  100/1875 [====>.....] - ETA: 1:23 - loss: 0.30`: the step of the epoch starts
/// the line, its bar right after it. (Its `3ms/step` is read as a step time by the pair reader.)
fn keras(body: &str) -> Option<u64> {
    let t = body.trim_start();
    let (n, rest) = t.split_once('/')?;
    let n: u64 = n.parse().ok()?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let after = rest.get(digits..)?;
    if digits == 0 {
        return None;
    }
    // without a bar (`verbose=2`: `1079/1079 - 21s - loss: ...`, char-rnn's `268/446 (epoch 0)`)
    if after.starts_with(" - ") || after.starts_with(" (") {
        return Some(n);
    }
    let bar = after.strip_prefix(" [")?;
    let (inside, _) = bar.split_once(']')?;
    (!inside.is_empty() && inside.bytes().all(|c| matches!(c, b'=' | b'>' | b'.'))).then_some(n)
}

/// Words that say a line is an evaluation's when they start it or one of its `|` columns:
/// `| valid on 'valid' subset |` (fairseq), `Evaluating: ...`, `[eval] step 100 ...`. (Anywhere
/// else they may be a note on a training line: LitGPT's `val (prev val iter): None`.)
const EVAL_WORDS: &[&str] = &[
    "eval",
    "evaluation",
    "evaluating",
    "evaluate",
    "val",
    "valid",
    "validation",
    "validating",
    "test",
    "testing",
];

/// An evaluation line of the loggers that print one in the training format: MetricLogger's and
/// ProgressMeter's `Test:  [40/96]  ... loss: 0.4499 ...`, their summary `* Acc@1 88.381 Acc@5
/// 96.779 loss 0.445`, mmengine's `Epoch(val) [1][10/50]`, DeepSpeed-Chat's reward evaluation
/// `chosen: 0.0, rejected: 0.0, loss: 0.69`. Its loss is no training step's. (Not a `*****
/// Running Evaluation *****` banner and the lines after it: with several ranks writing, training
/// lines of another rank follow such a banner too.)
pub(super) fn is_evaluation(body: &str) -> bool {
    let t = body.trim_start();
    t.starts_with("* Acc@")
        || (t.starts_with("chosen:") && t.contains("rejected:"))
        || body.contains("Epoch(val)")
        || body.contains("Epoch(test)")
        || body
            .split_whitespace()
            .any(|w| matches!(w, "Test:" | "Val:" | "Validation:" | "Eval:"))
        || body.split('|').any(|column| {
            column.split_whitespace().next().is_some_and(|w| {
                let w = w.trim_matches(|c: char| !c.is_ascii_alphanumeric());
                EVAL_WORDS.iter().any(|e| w.eq_ignore_ascii_case(e))
            })
        })
        || body.contains("Iter(val)")
        || body.contains("Iter(test)")
}

/// A bar of a training loop: its description names an epoch or training, and no evaluation.
fn training_bar(desc: &str) -> bool {
    let desc = desc.to_ascii_lowercase();
    (desc.contains("epoch") || desc.contains("train"))
        && !NOT_TRAINING.iter().any(|w| desc.contains(w))
}

/// tqdm's and Rich's rate: `4.47s/it` is the step time, `7.00it/s` its inverse.
fn rate_seconds(rate: &str) -> Option<f64> {
    let s = if let Some(v) = rate.strip_suffix("s/it") {
        v.trim().parse::<f64>().ok()
    } else if let Some(v) = rate.strip_suffix("it/s") {
        v.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| *v > 0.0)
            .map(|v| 1.0 / v)
    } else {
        None
    };
    s.filter(|s| s.is_finite() && *s >= 0.0)
}

/// `DESC BAR N/TOTAL ELAPSED • REMAINING RATE METRICS` (Lightning's RichProgressBar).
fn rich(body: &str) -> Option<(u64, Option<f64>)> {
    let (before, after) = body.split_once('•')?;
    let mut back = before.split_whitespace().rev();
    let elapsed = back.next()?;
    let position = back.next()?;
    let desc: Vec<&str> = back.collect();
    if !elapsed.contains(':') || !training_bar(&desc.concat()) {
        return None;
    }
    let (n, _total) = position.split_once('/')?;
    let n: u64 = n.parse().ok()?;
    let mut fwd = after.split_whitespace();
    let _remaining = fwd.next()?;
    Some((n, fwd.next().and_then(rate_seconds)))
}

/// Words in a progress bar's description that say it is no training loop.
const NOT_TRAINING: &[&str] = &["valid", "eval", "test", "predict", "sanity", "download"];

/// `DESC: PCT%|BAR| N/TOTAL [ELAPSED<REMAINING, RATE, POSTFIX]`. Only a bar whose description
/// names an epoch or training: a bare bar may be an evaluation or a download as well.
fn tqdm(body: &str) -> Option<(u64, Option<f64>)> {
    let pct = body.find("%|")?;
    if !training_bar(body.get(..pct)?) {
        return None;
    }
    let after_bar = body.get(pct + 2..)?;
    let (_, counts) = after_bar.split_once('|')?;
    let (position, stats) = counts.split_once('[')?;
    let (n, _total) = position.trim().split_once('/')?;
    let n: u64 = n.trim().parse().ok()?;
    // `00:17<01:02,  4.47s/it, loss=...`: the rate is the field after the times.
    let mut fields = stats.split([',', ']']);
    let times = fields.next()?;
    if !times.contains('<') {
        return None;
    }
    let rate = fields.next().map(str::trim).unwrap_or("");
    Some((n, rate_seconds(rate)))
}

/// `Epoch: [E]  [ I/N]`, `Epoch(train) [E][I/N]`, `Epoch [E][I/N]`: I. MMEngine's iteration-based
/// loop: `Iter(train) [  50/80000]`: I.
fn epoch_brackets(body: &str) -> Option<u64> {
    if let Some(at) = body.find("Iter(train)") {
        let rest = body.get(at + "Iter(train)".len()..)?.trim_start();
        let (pos, _) = bracket(rest)?;
        let (i, _total) = pos.split_once('/')?;
        return i.trim().parse().ok();
    }
    let lower = body.to_ascii_lowercase();
    let at = lower.find("epoch")?;
    let mut rest = body.get(at + "epoch".len()..)?;
    rest = rest.strip_prefix("(train)").unwrap_or(rest);
    rest = rest.strip_prefix(':').unwrap_or(rest).trim_start();
    let (epoch, after) = bracket(rest)?;
    // `[0]` or `[0/100]` (DINO)
    let epoch = epoch.split_once('/').map_or(epoch, |(e, _)| e);
    epoch.trim().parse::<u64>().ok()?;
    let (pos, _) = bracket(after.trim_start())?;
    let (i, _total) = pos.split_once('/')?;
    i.trim().parse().ok()
}

/// The text inside a leading `[...]` and what follows it.
fn bracket(s: &str) -> Option<(&str, &str)> {
    s.strip_prefix('[')?.split_once(']')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_bars() {
        let l =
            "Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.072, v_num=193315]";
        assert_eq!(read(l), Some((4, Some(4.47))));
        let l = "Epoch 1:  50%|█████     | 469/938 [00:05<00:05, 90.00it/s, loss=0.1]";
        assert_eq!(read(l).map(|r| r.0), Some(469));
        assert!(
            read(l)
                .and_then(|r| r.1)
                .is_some_and(|s| (s - 1.0 / 90.0).abs() < 1e-12)
        );
        // No rate yet, and bars that are no training loop.
        assert_eq!(
            read("Epoch 0:   0%|          | 0/18 [00:00<?, ?it/s]"),
            Some((0, None))
        );
        for l in [
            "Validation DataLoader 0: 100%|██████████| 5/5 [00:01<00:00,  3.20it/s]",
            " 45%|████▌     | 90/200 [00:47<00:57,  1.91it/s]",
            "Training: 0it [00:00, ?it/s]",
        ] {
            assert_eq!(read(l), None, "{l}");
        }
    }

    #[test]
    fn evaluation_lines() {
        for l in [
            "Test:  [40/96]  eta: 0:00:23  loss: 0.4499 (0.4725)  acc1: 87.5000 (87.4619)  time: 0.2936",
            "Test: [1460/2500]       Time 0.036 (0.039)      Loss 2.6388 (0.9189)    Acc@1 45.000 (76.451)",
            "* Acc@1 88.381 Acc@5 96.779 loss 0.445",
            "04/21 21:03:53 - mmengine - INFO - Epoch(val) [1][10/50]    eta: 0:00:02  time: 0.01",
        ] {
            assert!(is_evaluation(l), "{l}");
        }
        assert!(!is_evaluation(
            "Epoch: [51]  [ 0/31]  eta: 0:00:53  lr: 0.000755  loss: 0.0098 (0.0098)  time: 1.7375"
        ));
    }

    #[test]
    fn rich_bars() {
        let l = "Epoch 4    --------------- ---- 232/291 0:00:33 • 0:00:09 7.00it/s loss: 0.398 ";
        assert_eq!(read(l).map(|r| r.0), Some(232));
        assert!(
            read(l)
                .and_then(|r| r.1)
                .is_some_and(|s| (s - 1.0 / 7.0).abs() < 1e-12)
        );
        let l = "Epoch 0/9  ━━━━━━━━━━━━━━━━━━━━ 100/100 0:00:05 • 0:00:00 2.10s/it v_num: 0";
        assert_eq!(read(l), Some((100, Some(2.1))));
        assert_eq!(
            read("Validation   ━━━━━━━━━━━━━━ 5/5 0:00:01 • 0:00:00 3.20it/s"),
            None
        );
    }

    #[test]
    fn metric_logger_brackets() {
        let l =
            "Epoch: [0]  [ 103/5005]  eta: 4:43:31  lr: 0.1  loss: 6.8536 (6.9458)  time: 2.5401";
        assert_eq!(read(l), Some((103, None)));
        assert_eq!(
            read("Epoch(train) [1][10/90]  lr: 1.000e-02"),
            Some((10, None))
        );
        assert_eq!(
            read("Epoch [3][50/2500]\tlr: 0.02000, time: 1.090"),
            Some((50, None))
        );
        assert_eq!(read("Epoch: [0] Total time: 0:12:01"), None);
    }
}
