//! Which lines the Log tab colours: timeouts, NCCL warnings and errors, Python tracebacks, errors,
//! warnings. Tracebacks span lines, so they are followed per rank (ranks interleave their output).

use super::Highlight;

/// Open tracebacks: (rank, lines left).
#[derive(Debug, Default)]
pub(super) struct Tracebacks {
    open: Vec<(Option<u32>, u16)>,
}

/// Ranks followed at once, and the longest traceback followed; beyond either, lines fall back to
/// the plain classification (memory stays bounded).
const MAX_OPEN: usize = 64;
const MAX_TRACEBACK_LINES: u16 = 500;

impl Tracebacks {
    #[cfg(test)]
    pub fn open_count(&self) -> usize {
        self.open.len()
    }

    pub fn classify(&mut self, body: &str, rank: Option<u32>) -> Highlight {
        let t = body.trim_start();
        if t.starts_with("Traceback (most recent call last)") {
            if let Some(slot) = self.open.iter_mut().find(|(r, _)| *r == rank) {
                slot.1 = MAX_TRACEBACK_LINES;
            } else {
                if self.open.len() >= MAX_OPEN {
                    self.open.remove(0);
                }
                self.open.push((rank, MAX_TRACEBACK_LINES));
            }
            return Highlight::Traceback;
        }
        if let Some(i) = self.open.iter().position(|(r, _)| *r == rank) {
            if t.is_empty() {
                return Highlight::None;
            }
            let inside = body.starts_with([' ', '\t'])
                || t.starts_with("During handling of the above exception")
                || t.starts_with("The above exception was the direct cause");
            if inside {
                if let Some(slot) = self.open.get_mut(i) {
                    slot.1 = slot.1.saturating_sub(1);
                    if slot.1 == 0 {
                        self.open.remove(i);
                    }
                }
                return Highlight::Traceback;
            }
            // The first line back at the margin is the exception that ends the traceback.
            self.open.remove(i);
            if is_exception_line(t) {
                return Highlight::Traceback;
            }
        }
        classify(body)
    }
}

/// `RuntimeError: ...`, `torch.distributed.DistBackendError: ...`, `KeyboardInterrupt`.
fn is_exception_line(t: &str) -> bool {
    let name_end = t
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(t.len());
    let name = &t[..name_end];
    let after = &t[name_end..];
    (after.is_empty() || after.starts_with(':'))
        && [
            "Error",
            "Exception",
            "Interrupt",
            "Exit",
            "Failure",
            "Warning",
        ]
        .iter()
        .any(|s| name.ends_with(s))
}

/// One line on its own.
pub(super) fn classify(body: &str) -> Highlight {
    // NCCL INFO lines are the bulk of a debug log and never alarming.
    if body.contains("NCCL INFO") {
        return Highlight::None;
    }
    // One lower-case copy, then fast substring searches (a 1 GB log is millions of lines).
    let lower = body.to_ascii_lowercase();
    let has = |needle: &str| lower.contains(needle);
    if has("collective operation timeout")
        || has("before timing out")
        || has("timed out")
        || (has("timeout") && (has("watchdog") || has("nccl") || has("collective")))
    {
        return Highlight::Timeout;
    }
    if body.contains("NCCL WARN")
        || body.contains("NCCL ERROR")
        || has("nccl error")
        || [
            "ncclinternalerror",
            "ncclsystemerror",
            "ncclunhandledcudaerror",
            "ncclremoteerror",
            "ncclinvalidusage",
            "ncclinvalidargument",
        ]
        .iter()
        .any(|e| has(e))
    {
        return Highlight::Nccl;
    }
    let t = body.trim_start();
    if body.contains("RuntimeError")
        || body.contains("CUDA error")
        || has("out of memory")
        || body.contains("CANCELLED")
        || body.contains("Segmentation fault")
        || body.contains("core dumped")
        || body.contains("ERROR")
        || has("error:")
        || body.contains("ChildFailedError")
        || glog(t, 'E')
        || (is_exception_line(t) && !t.contains("Warning"))
    {
        return Highlight::Error;
    }
    if body.contains("WARN")
        || body.contains("Warning")
        || body.contains("warnings.warn")
        || glog(t, 'W')
        || body.contains("SIGTERM")
        || body.contains("SIGKILL")
    {
        return Highlight::Warn;
    }
    Highlight::None
}

/// glog / c10 severity prefixes: `[E ProcessGroupNCCL.cpp:475]`, `[W1012 16:46:40 ...]`, also after
/// torchrun's `[rank0]:`.
fn glog(t: &str, severity: char) -> bool {
    let mut chars = t.chars();
    chars.next() == Some('[')
        && chars.next() == Some(severity)
        && chars.next().is_some_and(|c| c == ' ' || c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        let cases = [
            (
                "[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600046 milliseconds before timing out.",
                Highlight::Timeout,
            ),
            (
                "node1:123:456 [0] NCCL WARN NET/IB : Got completion with error 12, opcode 0",
                Highlight::Nccl,
            ),
            (
                "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, unhandled system error",
                Highlight::Nccl,
            ),
            (
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
                Highlight::Error,
            ),
            (
                "slurmstepd: error: *** JOB 1999618 ON r6i4n5 CANCELLED AT 2021-05-27T21:52:36 DUE TO TIME LIMIT ***",
                Highlight::Error,
            ),
            (
                "RuntimeError: CUDA error: an illegal memory access was encountered",
                Highlight::Error,
            ),
            (
                "/usr/lib/python3/site-packages/torch/autograd/graph.py:744: UserWarning: grad strides",
                Highlight::Warn,
            ),
            (
                " [WARNING]  Please specify the CUTLASS repo directory",
                Highlight::Warn,
            ),
            (
                "[W1012 16:46:40.372 ProcessGroupNCCL.cpp:1168] Warning: something",
                Highlight::Warn,
            ),
            (
                "r7i4n5:49901:50338 [2] NCCL INFO comm 0x1 rank 34 nranks 64 - Init COMPLETE",
                Highlight::None,
            ),
            (
                " iteration        1/    1000 | elapsed time per iteration (ms): 150891.7 |",
                Highlight::None,
            ),
            ("Killing subprocess 4946", Highlight::None),
        ];
        for (line, want) in cases {
            assert_eq!(classify(line), want, "{line}");
        }
    }

    #[test]
    fn tracebacks_span_lines_per_rank() {
        let mut tb = Tracebacks::default();
        let r0 = Some(0);
        let r1 = Some(1);
        assert_eq!(
            tb.classify("Traceback (most recent call last):", r0),
            Highlight::Traceback
        );
        assert_eq!(tb.classify(" iteration 5 | loss 2", r1), Highlight::None);
        assert_eq!(
            tb.classify("  File \"train.py\", line 3, in <module>", r0),
            Highlight::Traceback
        );
        assert_eq!(tb.classify("    main()", r0), Highlight::Traceback);
        assert_eq!(tb.classify("ValueError: bad", r0), Highlight::Traceback);
        assert_eq!(
            tb.classify("  indented but after the end", r0),
            Highlight::None
        );
    }
}
