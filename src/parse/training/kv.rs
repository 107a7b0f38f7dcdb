//! The generic reader: every number in a line with the key printed before it — `key: value`,
//! `key=value`, `'key': value` (Python dicts, JSON), `| key value |` columns, `Key N` (`Iteration
//! 10`, `Epoch 1/3`, `loss 4.2`) — mapped to a [`TrainRecord`] field by the key's name ([`NAMES`],
//! [`LOSS_WORDS`]), with units from the key (`(ms)`, `_ms`) or the value (`45.2ms`, `398
//! samples/sec`, `3ms/step`). One reader serves the lab's scripts, PyTorch DDP scripts,
//! Hugging Face dicts, Megatron iteration lines and DeepSpeed's lines alike, so a new script that
//! prints `step=.. loss=..` needs nothing new.

use super::TrainRecord;

/// One record read from a line.
#[derive(Debug)]
pub(super) struct Group {
    pub rec: TrainRecord,
    /// The record expects a follow-up line: a Megatron iteration line (its timer line), or a line
    /// that only names an iteration (DeepSpeed's `step=N`, completed by its throughput line).
    pub waits: bool,
}

#[derive(Debug, Default)]
pub(super) struct Read {
    pub groups: Vec<Group>,
    /// A run summary (`{'train_runtime': ...}`): understood, and not a step.
    pub summary: bool,
    /// The line is one or two `key: value` pairs and nothing else, with no step among them: a line
    /// of a block under a step header (`  loss: 2.31`, `"lr": 0.001,`), known key or not.
    pub block_line: bool,
    /// An evaluation's line: read, and no step.
    pub evaluation: bool,
}

/// A line of a block holds at most this many pairs.
const MAX_BLOCK_PAIRS: usize = 2;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Field {
    Iteration,
    Epoch,
    Loss,
    Step,
    /// Forward and backward time (ezpz `dtf` / `dtb`): their sum is the step time when no step time
    /// is printed.
    Forward,
    Backward,
    AllReduce,
    Samples,
    Rank,
    Summary,
}

mod pairs;
mod progress;

use pairs::{Pair, Pairs, Unit};

/// Keys whose value may follow without `:` or `=` (`Iteration 10`, `Epoch 1/3`, `loss 4.2`).
const BARE_KEYS: &[&str] = &[
    "global step",
    "train step",
    "iteration",
    "iter",
    "step",
    "steps",
    "epoch",
    "batch",
    "loss",
    "time",
];

/// Keys longer than this are prose, not keys.
const MAX_KEY: usize = 64;

/// Read every record in `body` (a line without its rank prefix).
pub(super) fn read(body: &str) -> Read {
    let mut read = Read::default();
    if progress::is_evaluation(body) {
        read.evaluation = true;
        return read;
    }
    if is_metrics_table_row(body) {
        read.summary = true;
        return read;
    }
    let mut acc = Acc::default();
    let (mut pairs, mut all_sep, mut step) = (0usize, true, false);
    let (mut eval_loss, mut step_time) = (false, false);
    for pair in Pairs::new(body) {
        pairs += 1;
        all_sep &= pair.sep;
        eval_loss |= is_eval_loss(&pair);
        let Some((field, key)) = map(&pair) else {
            continue;
        };
        step |= field == Field::Iteration;
        step_time |= field == Field::Step;
        if field == Field::Summary {
            read.summary = true;
            continue;
        }
        // The same key twice means two records glued on one line: the second starts here.
        if acc.keys.contains(&key) {
            acc.finish(&mut read);
            acc = Acc::default();
        }
        acc.set(field, &key, &pair);
        acc.keys.push(key);
    }
    // A step printed without a key (a progress bar's `4/18`, MetricLogger's `[ 103/5005]`) belongs
    // to the line's one record; a line of glued records has no such position.
    if read.groups.is_empty()
        && let Some((step, seconds)) = progress::read(body)
    {
        set_once(&mut acc.rec.iteration, Some(step));
        set_once(&mut acc.rec.step_seconds, seconds);
    }
    acc.finish(&mut read);
    // An evaluation of both splits, with no step time: nanoGPT's `step 250: train loss 1.97, val
    // loss 2.08` is its estimate at an evaluation interval, not a step (Keras' epoch line prints
    // the step's own `loss` beside `val_loss`, and stays a step).
    let train_loss = eval_loss && {
        let lower = body.to_ascii_lowercase();
        ["train loss", "train_loss", "training loss", "train/loss"]
            .iter()
            .any(|k| lower.contains(k))
    };
    read.evaluation = eval_loss && train_loss && !step_time;
    if read.summary || read.evaluation {
        read.groups.clear();
    }
    read.block_line =
        (1..=MAX_BLOCK_PAIRS).contains(&pairs) && all_sep && !step && block_shaped(body);
    read
}

/// A row of Hugging Face's end-of-run table (`  train_loss               =     2.9772`): the key
/// padded to a column before its `=`. The run's summary, not a step.
fn is_metrics_table_row(body: &str) -> bool {
    let t = body.trim_start();
    let key = t
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count();
    key > 0
        && t.get(key..)
            .is_some_and(|rest| rest.starts_with("  ") && rest.trim_start().starts_with("= "))
}

/// A block line starts with its key: `loss: 2.3`, `- loss: 2.3`, `"loss": 2.3,` (no prose or
/// timestamp before it).
fn block_shaped(body: &str) -> bool {
    body.trim_start()
        .trim_start_matches(['-', '*', '|', '\'', '"', ' '])
        .starts_with(|c: char| c.is_ascii_alphabetic())
}

/// How much a line reads (comparing a line's weight with its halves' tells a wrapped line from
/// two lines).
pub(super) struct Weight {
    /// The pairs the vocabulary names, and a step printed without a key.
    pub fields: usize,
    pub records: usize,
    /// Records with a measurement (not only a position).
    pub steps: usize,
    /// Records with both a position and a measurement: a whole step, as a line of its own prints it.
    pub whole: usize,
    pub evaluation: bool,
}

pub(super) fn weight(body: &str) -> Weight {
    let r = read(body);
    Weight {
        evaluation: r.evaluation,
        records: r.groups.len(),
        steps: r.groups.iter().filter(|g| g.rec.has_progress()).count(),
        whole: r
            .groups
            .iter()
            .filter(|g| g.rec.has_progress() && g.rec.iteration.is_some())
            .count(),
        fields: Pairs::new(body).filter(|p| map(p).is_some()).count()
            + usize::from(progress::read(body).is_some()),
    }
}

/// A record being read.
#[derive(Default)]
struct Acc {
    rec: TrainRecord,
    forward: Option<f64>,
    backward: Option<f64>,
    megatron: bool,
    keys: Vec<String>,
}

impl Acc {
    fn set(&mut self, field: Field, key: &str, p: &Pair<'_>) {
        let time = |unit_from_key: Option<f64>| -> Option<f64> {
            let s = match p.unit {
                Unit::Time(f) | Unit::PerStep(f) => scale(p.value, f),
                Unit::None => scale(p.value, unit_from_key.unwrap_or(1.0)),
                _ => return None,
            };
            (s.is_finite() && s >= 0.0).then_some(s)
        };
        let key_unit = key_unit(key).1;
        match field {
            Field::Iteration => set_once(&mut self.rec.iteration, whole(p.value)),
            Field::Rank => set_once(
                &mut self.rec.rank,
                whole(p.value).and_then(|v| u32::try_from(v).ok()),
            ),
            Field::Epoch => set_once(
                &mut self.rec.epoch,
                (p.value.is_finite() && p.value >= 0.0).then_some(p.value),
            ),
            // Lightning's bar shows `loss=` smoothed over recent steps; NeMo's
            // `reduced_train_loss=` on the same bar is the step's own value, so it wins.
            Field::Loss if key == "reduced train loss" && plain(p).is_some() => {
                self.rec.loss = plain(p);
            }
            Field::Loss => set_once(&mut self.rec.loss, plain(p)),
            Field::Step => {
                if key.starts_with("elapsed time per iteration") {
                    self.megatron = true;
                }
                set_once(&mut self.rec.step_seconds, time(key_unit));
            }
            Field::Forward => set_once(&mut self.forward, time(key_unit)),
            Field::Backward => set_once(&mut self.backward, time(key_unit)),
            Field::AllReduce => set_once(&mut self.rec.allreduce_seconds, time(key_unit)),
            Field::Samples => set_once(
                &mut self.rec.samples_per_second,
                matches!(p.unit, Unit::None | Unit::SamplesPerSecond)
                    .then_some(p.value)
                    .filter(|v| v.is_finite() && *v >= 0.0),
            ),
            Field::Summary => {}
        }
    }

    fn finish(&mut self, read: &mut Read) {
        let mut rec = self.rec;
        if rec.step_seconds.is_none()
            && let (Some(f), Some(b)) = (self.forward, self.backward)
        {
            rec.step_seconds = Some(f + b);
        }
        let progress = rec.has_progress();
        if progress || rec.iteration.is_some() {
            read.groups.push(Group {
                rec,
                waits: self.megatron || !progress,
            });
        }
    }
}

/// `v` in a unit of `factor` seconds, in seconds. Sub-second units divide (`45.2ms` is exactly
/// 0.0452 s, as `num::seconds` reads it).
fn scale(v: f64, factor: f64) -> f64 {
    if factor < 1.0 {
        v / (1.0 / factor).round()
    } else {
        v * factor
    }
}

fn set_once<T>(slot: &mut Option<T>, v: Option<T>) {
    if slot.is_none() {
        *slot = v;
    }
}

/// A non-negative whole number (an iteration, a rank).
fn whole(v: f64) -> Option<u64> {
    (v >= 0.0 && v.fract() == 0.0 && v < 9.0e15).then_some(v as u64)
}

/// A value that must carry no unit (a loss).
fn plain(p: &Pair<'_>) -> Option<f64> {
    (p.unit == Unit::None).then_some(p.value)
}

/// The vocabulary: what each key names, after [`normalise`] and without its unit (`iter time (s)`
/// is `iter time`). Where a name comes from one framework, the comment says which.
const NAMES: &[(&str, Field)] = &[
    ("iteration", Field::Iteration),
    ("iter", Field::Iteration),
    ("iters", Field::Iteration),
    ("step", Field::Iteration),
    ("steps", Field::Iteration),
    ("global step", Field::Iteration),
    ("train step", Field::Iteration),
    ("batch", Field::Iteration),
    // fairseq: `num_updates 500`; Composer: `ba` is its batch counter (`[batch=10/100]`)
    ("num updates", Field::Iteration),
    ("updates", Field::Iteration),
    ("optimizer step", Field::Iteration),
    // MaxText: `completed step: 9, seconds: 5.667, ...`
    ("completed step", Field::Iteration),
    ("epoch", Field::Epoch),
    ("train epoch", Field::Epoch),
    ("loss", Field::Loss),
    ("lm loss", Field::Loss),
    // LitGPT: `loss train (curr): 1.657`
    ("loss train (curr)", Field::Loss),
    // NeMo / Megatron-Core through Lightning: the loss averaged over data-parallel ranks
    ("reduced train loss", Field::Loss),
    ("elapsed time per iteration", Field::Step),
    ("iter time", Field::Step),
    ("iteration time", Field::Step),
    ("step time", Field::Step),
    ("time per step", Field::Step),
    ("time per iteration", Field::Step),
    ("batch time", Field::Step),
    ("train step time", Field::Step),
    ("time", Field::Step),
    ("dt", Field::Step),
    // NeMo: `train_step_timing in s: 0.03146`
    ("train step timing", Field::Step),
    // MaxText's step time; only as `seconds:` (a key), never a bare word
    ("seconds", Field::Step),
    // PaddlePaddle's suites: `batch_cost: 0.5344` (`avg_batch_cost: 0.18023 s`)
    ("batch cost", Field::Step),
    ("avg batch cost", Field::Step),
    // VISSL: `btime(ms): 192`
    ("btime", Field::Step),
    // char-rnn and its kin: `time/batch = 0.194`
    ("time/batch", Field::Step),
    // DeepSpeed-Chat: `Latency: 0.27s` (SFT/DPO/reward), `E2E latency=7.99s` (RLHF step)
    ("latency", Field::Step),
    ("e2e latency", Field::Step),
    // ezpz: forward and backward seconds
    ("dtf", Field::Forward),
    ("dtb", Field::Backward),
    ("allreduce", Field::AllReduce),
    ("all reduce", Field::AllReduce),
    ("allreduce time", Field::AllReduce),
    ("all reduce time", Field::AllReduce),
    ("samples/sec", Field::Samples),
    ("samples/s", Field::Samples),
    ("sample/s", Field::Samples),
    ("samples per second", Field::Samples),
    ("samples per sec", Field::Samples),
    ("currsamplespersec", Field::Samples),
    // DeepSpeed-Chat's RLHF line spells it with one r
    ("cursamplespersec", Field::Samples),
    // MetricLogger of the image references: images are its samples
    ("img/s", Field::Samples),
    ("images/s", Field::Samples),
    ("images/sec", Field::Samples),
    // PaddlePaddle: `ips: 355.1 samples/s` (instances per second), also without a unit
    ("ips", Field::Samples),
    ("rank", Field::Rank),
    ("global rank", Field::Rank),
    ("train runtime", Field::Summary),
];

/// Words that may stand beside `loss` in a training loss's name (`train loss`, `batch avg loss`,
/// `loss/train/total`, `avg_loss`); any other word names another loss (`val loss`, `nll loss`,
/// `loss scale`).
const LOSS_WORDS: &[&str] = &[
    "train", "training", "batch", "avg", "average", "mean", "total", "step", "running", "lm",
    "curr", "smoothed", "reduced",
];

/// Namespaces a logger puts before a key (`train/loss`, `trainer/global_step`).
const KEY_SPACES: &[&str] = &["train/", "training/", "trainer/"];

/// The field a pair feeds, and its normalised key.
fn map(p: &Pair<'_>) -> Option<(Field, String)> {
    let per_step = matches!(p.unit, Unit::PerStep(_));
    // Keras: `- 5s 3ms/step -`: the unit says what it is.
    if per_step && normalise(p.key).is_none() {
        return Some((Field::Step, "per step".to_string()));
    }
    let key = normalise(p.key)?;
    // icefall: `loss[loss=0.74, ...], tot_loss[loss=1.09, ...]`: the bracket names the key.
    let key = match p.outer.and_then(normalise) {
        Some(outer) => format!("{outer}/{key}"),
        None => key,
    };
    let (base, _) = key_unit(&key);
    let base = KEY_SPACES
        .iter()
        .find_map(|ns| base.strip_prefix(ns))
        .filter(|b| !b.is_empty())
        .unwrap_or(base);
    if !p.sep && !p.delimited && !per_step && !BARE_KEYS.contains(&base) {
        return None;
    }
    let named = NAMES.iter().find(|(n, _)| *n == base).map(|(_, f)| *f);
    let field = match named {
        // The lab's `Total: 156.3ms` is the step time; a bare `total` elsewhere is a count.
        None if base == "total" && matches!(p.unit, Unit::Time(_)) => Field::Step,
        None if per_step => Field::Step,
        None if p.unit == Unit::SamplesPerSecond => Field::Samples,
        None if is_loss_name(base) => Field::Loss,
        Some(f) => f,
        None => return None,
    };
    Some((field, key))
}

/// A number under an evaluation's loss: `val loss`, `eval_loss`, `valid/loss`, `loss/val`.
fn is_eval_loss(p: &Pair<'_>) -> bool {
    let Some(key) = normalise(p.key) else {
        return false;
    };
    let words: Vec<&str> = key.split([' ', '/']).filter(|w| !w.is_empty()).collect();
    p.value.is_finite()
        && words.contains(&"loss")
        && words
            .iter()
            .any(|w| matches!(*w, "val" | "valid" | "validation" | "eval" | "test"))
}

/// `loss` with only [`LOSS_WORDS`] beside it.
fn is_loss_name(key: &str) -> bool {
    let words: Vec<&str> = key
        .split([' ', '/', '.'])
        .filter(|w| !w.is_empty())
        .collect();
    words.contains(&"loss") && words.iter().all(|w| *w == "loss" || LOSS_WORDS.contains(w))
}

/// The key without a unit suffix (`iter time (s)`, `elapsed time per iteration ms`), and the unit's
/// factor to seconds.
fn key_unit(key: &str) -> (&str, Option<f64>) {
    const SUFFIXES: &[(&str, f64)] = &[
        // NeMo: `train_step_timing in s`
        (" in s", 1.0),
        (" in ms", 1e-3),
        (" (ms)", 1e-3),
        (" (msec)", 1e-3),
        (" msec", 1e-3),
        (" ms", 1e-3),
        (" (seconds)", 1.0),
        (" seconds", 1.0),
        (" (s)", 1.0),
        (" (sec)", 1.0),
        (" s", 1.0),
        (" sec", 1.0),
        (" (us)", 1e-6),
        (" us", 1e-6),
    ];
    for (suffix, f) in SUFFIXES {
        if let Some(base) = key.strip_suffix(suffix) {
            return (base, Some(*f));
        }
    }
    (key, None)
}

/// Lower case, quotes and leading punctuation gone, `_` and `-` as spaces, one space between words.
fn normalise(raw: &str) -> Option<String> {
    let k = raw.trim_start_matches(|c: char| !c.is_alphanumeric());
    if k.is_empty() || k.len() > MAX_KEY {
        return None;
    }
    let mut out = String::with_capacity(k.len());
    for word in k.split(|c: char| c.is_whitespace() || c == '_' || c == '-') {
        if word.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    // `time(ms)` as well as `time (ms)`
    if let Some(open) = out.rfind('(')
        && open > 0
        && !out[..open].ends_with(' ')
    {
        out.insert(open, ' ');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn near(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    fn one(line: &str) -> TrainRecord {
        let r = read(line);
        assert_eq!(r.groups.len(), 1, "{line}: {:?}", r.groups);
        r.groups[0].rec
    }

    #[test]
    fn pairs_of_every_shape() {
        let r = one("Iteration   10 | Loss: 2.3045 | AllReduce: 45.2ms | Total: 156.3ms");
        assert_eq!(r.iteration, Some(10));
        assert_eq!(r.loss, Some(2.3045));
        assert!(near(r.allreduce_seconds, 0.0452));
        assert!(near(r.step_seconds, 0.1563));

        let r = one("steps: 100 loss: 0.0585 iter time (s): 0.186 samples/sec: 53.694");
        assert_eq!(
            (r.iteration, r.loss, r.step_seconds, r.samples_per_second),
            (Some(100), Some(0.0585), Some(0.186), Some(53.694))
        );

        let r = one("iter 10: loss 4.2180, time 125.33ms, mfu -100.00%");
        assert_eq!((r.iteration, r.loss), (Some(10), Some(4.218)));
        assert!(near(r.step_seconds, 0.12533));

        let r = one("2024-01-01 12:00:00,123 - __main__ - INFO - Step 10, loss: 2.5e-1");
        assert_eq!((r.iteration, r.loss), (Some(10), Some(0.25)));
    }

    #[test]
    fn common_script_formats() {
        // the PyTorch tutorials
        let r = one("Epoch [1/10], Step [100/600], Loss: 0.2345");
        assert_eq!(
            (r.epoch, r.iteration, r.loss),
            (Some(1.0), Some(100), Some(0.2345))
        );
        let r = one("Train Epoch: 1 [640/60000 (1%)]\tLoss: 2.300581");
        assert_eq!(
            (r.epoch, r.iteration, r.loss),
            (Some(1.0), None, Some(2.300581))
        );
        // torchtitan
        let r = one("step:  1  loss: 12.2446  memory: 31.09GiB(32.71%)  tps: 1,023  mfu: 3.16%");
        assert_eq!((r.iteration, r.loss), (Some(1), Some(12.2446)));
        // thousands separators
        let r = one("step=12,345 samples/sec: 1,234.5 loss=1");
        assert_eq!(
            (r.iteration, r.samples_per_second),
            (Some(12345), Some(1234.5))
        );
    }

    #[test]
    fn nemo_bar_prefers_the_step_loss_and_global_step() {
        // `loss=` is Lightning's smoothed value, `reduced_train_loss=` the step's own; the bar's
        // `795/77225` counts batches of the epoch, `global_step=794.0` is the step.
        let r = one(
            "Epoch 0:   1%|          | 795/77225 [9:07:58<878:01:48, 41.36s/it, loss=3.1, v_num=, reduced_train_loss=3.090, global_step=794.0, consumed_samples=1.63e+6]",
        );
        assert_eq!(
            (r.iteration, r.loss, r.step_seconds),
            (Some(794), Some(3.09), Some(41.36))
        );
    }

    #[test]
    fn prose_is_not_a_record() {
        for line in [
            "Saving model checkpoint to trainer_output/checkpoint-10",
            "Warmup complete at step 5",
            "comm 0x1511d4005e60 rank 31 nranks 64 cudaDev 3 busId 8a000 - Init COMPLETE",
            "[Epoch 1] Epoch Time: 12.34s",
            "Epoch 1/3",
            "train_loss               =     2.9772",
            "Batch size = 8",
        ] {
            assert!(read(line).groups.is_empty(), "{line}");
        }
    }

    #[test]
    fn glued_records_split_on_a_repeated_key() {
        let r = read(
            "Iteration 10 | Loss: 2.3 | Total: 156.3msIteration 20 | Loss: 2.2 | Total: 150ms",
        );
        let its: Vec<_> = r
            .groups
            .iter()
            .map(|g| (g.rec.iteration, g.rec.loss))
            .collect();
        assert_eq!(its, vec![(Some(10), Some(2.3)), (Some(20), Some(2.2))]);
        let r = read("{'loss': 2.8, 'epoch': 0.1}{'loss': 2.9, 'epoch': 0.2}");
        assert_eq!(r.groups.len(), 2);
        assert_eq!(r.groups[1].rec.epoch, Some(0.2));
    }

    #[test]
    fn units_and_fractions() {
        assert_eq!(one("epoch 1/3, loss 1").epoch, Some(1.0));
        assert!(near(one("step_time_ms=250 step=3").step_seconds, 0.25));
        assert_eq!(
            one("Speed: 398 samples/sec, Batch 1").samples_per_second,
            Some(398.0)
        );
        assert_eq!(
            one("Throughput: 12 samples/s step 4").samples_per_second,
            Some(12.0)
        );
        let r = one(
            "elapsed time per iteration (ms): 13100.0/13240.9 | lm loss: 4.142716E-03 | iteration 3/ 5 |",
        );
        assert_eq!((r.loss, r.iteration), (Some(4.142716e-3), Some(3)));
        assert!(near(r.step_seconds, 13.1));
        assert!(read("elapsed time per iteration (ms): 1 |").groups[0].waits);
    }
}
