#![no_main]
use libfuzzer_sys::fuzz_target;
use rocetop::parse::ParseKind;

fuzz_target!(|data: &[u8]| rocetop_fuzz::parse_kind(ParseKind::EosInterface, data));
