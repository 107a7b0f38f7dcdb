//! NX-API certificate pins as a config value: `SHA256:<base64>` or hex.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};

/// Parse `SHA256:base64` (padded or not) or 64 hex digits with or without colons.
pub fn parse_fingerprint(s: &str) -> Result<[u8; 32], String> {
    let t = s.trim();
    let bad = || {
        format!(
            "nxapi_fingerprint {t:?}: expected SHA256:<base64> or 64 hex digits (colons allowed)"
        )
    };
    let bytes = if let Some(b64) = t
        .strip_prefix("SHA256:")
        .or_else(|| t.strip_prefix("sha256:"))
    {
        let b64 = b64.trim_end_matches('=');
        STANDARD_NO_PAD
            .decode(b64)
            .or_else(|_| STANDARD.decode(b64))
            .map_err(|_| bad())?
    } else {
        let hex: String = t.chars().filter(|c| *c != ':').collect();
        if hex.len() != 64 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(bad());
        }
        (0..32)
            .map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2).unwrap_or(""), 16))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|_| bad())?
    };
    bytes.try_into().map_err(|_| bad())
}
