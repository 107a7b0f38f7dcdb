//! XID errors: the codes the NVIDIA driver logs when a GPU fails (dcgm-exporter's
//! `DCGM_FI_DEV_XID_ERRORS` is the last one a GPU reported, 0 for none). The few a fabric's
//! operator meets most, in the words of NVIDIA's "XID Errors" document (GPU Deployment and
//! Management Documentation); any other code is told by its number alone.

/// A code's meaning, and whether the GPU is out of service until drained or reset (else the
/// job that hit it is, or nothing is yet).
const KNOWN: &[(u32, &str, bool)] = &[
    (13, "graphics engine exception", false),
    (31, "GPU memory page fault", false),
    (43, "GPU stopped processing", false),
    (45, "preemptive cleanup after earlier errors", false),
    (48, "double-bit ECC error", true),
    (63, "ECC page retirement or row remap recorded", false),
    (64, "ECC page retirement or row remap failed", true),
    (74, "NVLink error", true),
    (79, "fallen off the bus", true),
    (92, "high single-bit ECC error rate", false),
    (94, "contained ECC error", false),
    (95, "uncontained ECC error", true),
    (119, "GSP RPC timeout", true),
    (120, "GSP error", true),
];

/// What XID `code` means, where it is one of the well-known ones.
pub fn meaning(code: u32) -> Option<&'static str> {
    KNOWN.iter().find(|k| k.0 == code).map(|k| k.1)
}

/// Whether XID `code` takes the GPU out of service (a reset or a drain is needed).
pub fn severe(code: u32) -> bool {
    KNOWN.iter().any(|k| k.0 == code && k.2)
}

/// An XID's value as read (a gauge): its code, where it is a whole positive number.
pub fn code(v: f64) -> Option<u32> {
    (v.is_finite() && v >= 1.0 && v <= f64::from(u32::MAX) && v.fract() == 0.0).then_some(v as u32)
}

/// `XID 79 on GPU 2: fallen off the bus`; `XID 140 on GPU 2` for a code not in the table.
pub fn describe(code: u32, gpu: &str) -> String {
    match meaning(code) {
        Some(m) => format!("XID {code} on GPU {gpu}: {m}"),
        None => format!("XID {code} on GPU {gpu}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_read_and_told() {
        for (v, want) in [
            (79.0, Some(79)),
            (0.0, None),
            (-3.0, None),
            (f64::NAN, None),
            (f64::INFINITY, None),
            (12.5, None),
            (1e12, None),
        ] {
            assert_eq!(code(v), want, "{v}");
        }
        assert_eq!(describe(79, "2"), "XID 79 on GPU 2: fallen off the bus");
        assert_eq!(describe(140, "0"), "XID 140 on GPU 0");
        assert!(severe(79) && severe(48) && !severe(13) && !severe(140));
    }
}
