//! tqdm progress bars (`  6%|▋         | 1/16 [00:01<00:18,  1.26s/it]`, redrawn after a CR).
//!
//! The Hugging Face Trainer's log dicts (`{'loss': '4.716', 'grad_norm': ..., 'epoch': '0.0625'}`)
//! name no step; the step is in its progress bar. Its `ProgressCallback` advances the bar at the
//! end of a step, then writes the dict through `tqdm.write`, which clears the bar, writes the line
//! and redraws the bar at once: so the first bar after a dict shows the step that dict logged
//! (captured from transformers 5.23 by scripts/frameworks.sh; the bar *before* the dict shows that
//! step or the one before, depending on whether tqdm's `mininterval` let the step redraw it).
//! A bar elsewhere (evaluation, data loading, downloads) counts something else and is no step.

/// `n` of a tqdm bar's `n/total [`, when `body` is one: a percentage glued to the bar's `|`, the
/// bar, `|`, the counts and the bracket of times and rate.
pub(super) fn tqdm_count(body: &str) -> Option<u64> {
    let pct = body.find("%|")?;
    let percent = body[..pct]
        .bytes()
        .rev()
        .take_while(u8::is_ascii_digit)
        .count();
    if percent == 0 || percent > 3 {
        return None;
    }
    let rest = &body[pct + 2..];
    let after_bar = &rest[rest.find('|')? + 1..];
    let counts = after_bar.trim_start_matches(' ');
    let n_len = counts.bytes().take_while(u8::is_ascii_digit).count();
    let n: u64 = counts.get(..n_len)?.parse().ok()?;
    let total = counts[n_len..].strip_prefix('/')?;
    let total_len = total.bytes().take_while(u8::is_ascii_digit).count();
    let tail = total[total_len..].trim_start_matches(' ');
    (total_len > 0 && tail.starts_with('[')).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::tqdm_count;

    #[test]
    fn bars_and_what_is_not_one() {
        // transformers 5.23 (scripts/frameworks.sh), unicode and ascii bars, a description
        assert_eq!(
            tqdm_count("  6%|▋         | 1/16 [00:01<00:18,  1.26s/it]"),
            Some(1)
        );
        assert_eq!(
            tqdm_count("100%|██████████| 16/16 [00:05<00:00,  2.95it/s]"),
            Some(16)
        );
        assert_eq!(
            tqdm_count("Epoch 1:  40%|####      | 40/100 [00:04<00:06, 9.9it/s, loss=2.1]"),
            Some(40)
        );
        assert_eq!(
            tqdm_count("  0%|          | 0/16 [00:00<?, ?it/s]"),
            Some(0)
        );
        for line in [
            "",
            "Map: 100%|██████████| 64/64 examples",
            "{'loss': '4.716', 'epoch': '0.0625'}",
            "loss 5%|x",
            "100%| done | 3/ [",
            "iter 3/10 [rank0] 50%|",
        ] {
            assert_eq!(tqdm_count(line), None, "{line}");
        }
    }
}
