//! NX-API tables read one row at a time. `json_doc` + `nxapi_bodies` + `find_rows` hold the whole
//! reply as a `serde_json::Value` tree, ~760 B a port: a 125k-port PFC reply is ~95 MB of tree
//! before the first sample. Here the reply is walked as text instead: each object on
//! the way to the table is split into its keys and values (slices of the input), the rows array
//! into its rows' slices, and one row at a time becomes a `Value` for the parser's row function,
//! then is dropped. The rows, their order and each row's `Value` are those of the tree
//! walk (the tests compare both); a document the tree refuses is refused with the same message,
//! because it is first read by the same deserializer with a visitor that keeps nothing. (serde_json's
//! `RawValue` would find the slices too, but its feature makes every `Value` in the program read an
//! object whose first key is its private token as embedded JSON text: a switch could use that.)

use super::common::{Acc, json_text};
use crate::metrics::{Parsed, Sample, Sink};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::collections::BTreeMap;

/// An NX-API reply's `TABLE_x` through `row`, one row at a time: `None` when `text` is not JSON
/// (the text parser's turn), an unknown line for invalid JSON or a reply without the table.
pub fn parse_rows(
    text: &str,
    table: &str,
    row: impl FnMut(&mut Parsed, &mut Acc, &Value),
) -> Option<Parsed> {
    let mut acc = Acc::default();
    Some(match parse_rows_into(text, table, &mut acc, row)? {
        Ok(p) => acc.into_parsed(p),
        Err(bad) => bad,
    })
}

/// [`parse_rows`] with the rows' samples put in `out` as each row is read (`rocetop parse`
/// streams them: [`Sink`]). `Ok`: what else the reply gave; `Err`: the reply could not be read
/// after all and this is the whole result (not reached: see below).
pub fn parse_rows_into<S: Sink + ?Sized>(
    text: &str,
    table: &str,
    out: &mut S,
    mut row: impl FnMut(&mut Parsed, &mut S, &Value),
) -> Option<Result<Parsed, Parsed>> {
    let t = json_text(text)?;
    let mut p = Parsed::default();
    let rows = match rows_of(t, table) {
        Ok(r) => r,
        Err(e) => {
            p.unknown(&e);
            return Some(Ok(p));
        }
    };
    if rows.is_empty() {
        p.unknown(&format!("JSON without {table}"));
    }
    for raw in rows {
        match serde_json::from_str::<Value>(raw) {
            Ok(r) => row(&mut p, out, &r),
            // Not reached: a part of a valid document is valid; if it were, nothing half-read.
            Err(e) => {
                let mut bad = Parsed::default();
                bad.unknown(&format!("invalid JSON: {e}"));
                return Some(Err(bad));
            }
        }
    }
    Some(Ok(p))
}

/// The accumulator is a sink that keeps the last value of each series at its first place.
impl Sink for Acc {
    fn set(&mut self, s: Sample) {
        Acc::set(self, s);
    }
}

/// The rows `find_rows` finds in each of `nxapi_bodies` of the document `t`, in that order, as
/// slices of `t`. `Err`: the message `json_doc` gives for `t`.
pub fn rows_of<'a>(t: &'a str, table: &str) -> Result<Vec<&'a str>, String> {
    serde_json::from_str::<Valid>(t).map_err(|e| format!("invalid JSON: {e}"))?;
    // From here on the text is valid JSON: the scanner below only finds where values end.
    let doc = &t[..value_len(t.as_bytes(), 0)];
    let mut out = Vec::new();
    for body in bodies(doc)? {
        find(body, table, &mut out)?;
    }
    Ok(out)
}

type Obj<'a> = BTreeMap<String, &'a str>;

/// Past the JSON whitespace at `i`.
fn ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Where the value that starts at `b[i]` ends, in valid JSON: a string at its closing quote (an
/// escaped quote skipped), an object or array at its bracket (brackets inside strings skipped), a
/// number or literal at the first byte that cannot be in one.
fn value_len(b: &[u8], i: usize) -> usize {
    let string_end = |mut j: usize| {
        j += 1;
        while let Some(&c) = b.get(j) {
            match c {
                b'\\' => j += 2,
                b'"' => return j + 1,
                _ => j += 1,
            }
        }
        j
    };
    match b.get(i) {
        Some(b'"') => string_end(i),
        Some(b'{' | b'[') => {
            let (mut depth, mut j) = (0usize, i);
            while let Some(&c) = b.get(j) {
                match c {
                    b'"' => {
                        j = string_end(j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            j
        }
        _ => {
            let mut j = i;
            while b
                .get(j)
                .is_some_and(|c| !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
            {
                j += 1;
            }
            j
        }
    }
}

/// The members of an object or array slice: (key slice, value slice) pairs, keys `None` in an
/// array. `None`: the slice is neither, or is not the valid JSON it should be.
fn members(v: &str, open: u8, close: u8) -> Option<Vec<(Option<&str>, &str)>> {
    let b = v.as_bytes();
    if b.first() != Some(&open) {
        return None;
    }
    let mut out = Vec::new();
    let mut i = ws(b, 1);
    if b.get(i) == Some(&close) {
        return Some(out);
    }
    loop {
        let key = if open == b'{' {
            let end = value_len(b, i);
            let k = v.get(i..end)?;
            i = ws(b, end);
            if b.get(i) != Some(&b':') {
                return None;
            }
            i = ws(b, i + 1);
            Some(k)
        } else {
            None
        };
        let end = value_len(b, i);
        out.push((key, v.get(i..end)?));
        i = ws(b, end);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            Some(c) if *c == close => return Some(out),
            _ => return None,
        }
    }
}

/// The keys and values of an object (`None`: not an object). Duplicate keys: the last wins, as
/// in `Value`'s map; keys are unescaped as `Value` does.
fn object(v: &str) -> Result<Option<Obj<'_>>, String> {
    if !v.starts_with('{') {
        return Ok(None);
    }
    let bad = || "invalid JSON: an object the scanner could not split".to_string();
    let mut m = Obj::new();
    for (k, val) in members(v, b'{', b'}').ok_or_else(bad)? {
        let k: String =
            serde_json::from_str(k.ok_or_else(bad)?).map_err(|e| format!("invalid JSON: {e}"))?;
        m.insert(k, val);
    }
    Ok(Some(m))
}

fn array(v: &str) -> Result<Option<Vec<&str>>, String> {
    if !v.starts_with('[') {
        return Ok(None);
    }
    let m = members(v, b'[', b']')
        .ok_or_else(|| "invalid JSON: an array the scanner could not split".to_string())?;
    Ok(Some(m.into_iter().map(|(_, v)| v).collect()))
}

/// `Value::get(key)`: `None` on anything but an object.
fn get<'a>(v: &'a str, key: &str) -> Result<Option<&'a str>, String> {
    Ok(object(v)?.and_then(|mut m| m.remove(key)))
}

/// `common::each`: an array's elements, anything else alone.
fn each(v: &str) -> Result<Vec<&str>, String> {
    Ok(array(v)?.unwrap_or_else(|| vec![v]))
}

/// `common::nxapi_bodies`.
fn bodies(doc: &str) -> Result<Vec<&str>, String> {
    let Some(mut top) = object(doc)? else {
        return Ok(vec![doc]);
    };
    // `pointer("/ins_api/outputs/output")`: objects all the way (an array has no key "outputs").
    let mut out = None;
    if let Some(api) = top.get("ins_api")
        && let Some(outputs) = get(api, "outputs")?
    {
        out = get(outputs, "output")?;
    }
    if let Some(out) = out {
        let mut b = Vec::new();
        for o in each(out)? {
            b.extend(get(o, "body")?);
        }
        return Ok(b);
    }
    if let Some(res) = top.remove("result").filter(|r| *r != "null") {
        return each(res)?
            .into_iter()
            .map(|r| Ok(get(r, "body")?.unwrap_or(r)))
            .collect();
    }
    if let Some(b) = top.remove("body") {
        return Ok(vec![b]);
    }
    Ok(vec![doc])
}

/// `common::find_rows`: the first objects holding `table` on each path, in key order.
fn find<'a>(v: &'a str, table: &str, out: &mut Vec<&'a str>) -> Result<(), String> {
    if let Some(m) = object(v)? {
        if let Some(t) = m.get(table) {
            let row_key = format!("ROW_{}", table.strip_prefix("TABLE_").unwrap_or(table));
            if let Some(r) = get(t, &row_key)? {
                match array(r)? {
                    Some(a) => out.extend(a),
                    None if r.starts_with('{') => out.push(r),
                    None => {}
                }
            }
            return Ok(());
        }
        for c in m.values() {
            find(c, table, out)?;
        }
    } else if let Some(a) = array(v)? {
        for c in a {
            find(c, table, out)?;
        }
    }
    Ok(())
}

/// Reads a document as `Value` does (the same `deserialize_any` calls, so the same numbers out of
/// range, escapes, nesting limit and trailing characters refused) and keeps nothing.
struct Valid;

impl<'de> Deserialize<'de> for Valid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Valid)
    }
}

impl<'de> Visitor<'de> for Valid {
    type Value = Valid;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_str<E>(self, _: &str) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_unit<E>(self) -> Result<Valid, E> {
        Ok(Valid)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Valid, A::Error> {
        while a.next_element::<Valid>()?.is_some() {}
        Ok(Valid)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Valid, A::Error> {
        while m.next_entry::<Valid, Valid>()?.is_some() {}
        Ok(Valid)
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::{find_rows, json_doc, nxapi_bodies};
    use super::*;

    /// The rows the tree walk finds, or its error.
    fn tree(text: &str, table: &str) -> Result<Vec<Value>, String> {
        let doc = json_doc(text).expect("JSON")?;
        let mut rows = Vec::new();
        for body in nxapi_bodies(&doc) {
            find_rows(body, table, &mut rows);
        }
        Ok(rows.into_iter().cloned().collect())
    }

    fn lazy(text: &str, table: &str) -> Result<Vec<Value>, String> {
        let rows = rows_of(json_text(text).expect("JSON"), table)?;
        Ok(rows
            .into_iter()
            .map(|r| serde_json::from_str(r).expect("a valid row"))
            .collect())
    }

    #[test]
    fn the_rows_and_errors_are_those_of_the_tree() {
        const T: &str = "TABLE_pfc_interface";
        let docs = [
            // ins_api, one output and a list of them, one row and a list of rows
            r#"{"ins_api":{"outputs":{"output":{"body":{"TABLE_pfc_interface":{"ROW_pfc_interface":[{"if_name_str":"Eth1/1","rx-stats":"1"},{"if_name_str":"Eth1/2","rx-stats":-3}]}}}}}}"#,
            r#"{"ins_api":{"outputs":{"output":[{"body":{"TABLE_pfc_interface":{"ROW_pfc_interface":{"if_name_str":"Eth1/1","tx-stats":1e300}}}},{"code":"400"},{"body":{"TABLE_pfc_interface":{"ROW_pfc_interface":[{"a":null},{"b":[1,2.5,true]}]}}}]}}}"#,
            // ins_api without outputs: the document itself
            r#"{"ins_api":{"x":1},"TABLE_pfc_interface":{"ROW_pfc_interface":{"if_name_str":"Eth1/9"}}}"#,
            r#"{"ins_api":[{"outputs":1}],"body":{"TABLE_pfc_interface":{"ROW_pfc_interface":[{"k":"v"}]}}}"#,
            // JSON-RPC result (list, object, null), bare body, nested tables in key order
            r#"{"jsonrpc":"2.0","result":[{"body":{"TABLE_pfc_interface":{"ROW_pfc_interface":[{"n":1}]}}},{"TABLE_pfc_interface":{"ROW_pfc_interface":{"n":2}}}]}"#,
            r#"{"result":{"body":{"TABLE_pfc_interface":{"ROW_pfc_interface":{"n":3}}}}}"#,
            r#"{"result":null,"body":{"TABLE_module":{"ROW_module":[{"z":{"TABLE_pfc_interface":{"ROW_pfc_interface":[{"n":5}]}}},{"a":{"TABLE_pfc_interface":{"ROW_pfc_interface":{"n":4}}}}]}}}"#,
            r#"{"b":{"TABLE_pfc_interface":{"ROW_pfc_interface":[{"n":"b"}]}},"a":{"TABLE_pfc_interface":{"ROW_pfc_interface":[{"n":"a"}]}}}"#,
            // duplicate keys (the last wins), escaped keys, rows of the wrong shape
            r#"{"TABLE_pfc_interface":{"ROW_pfc_interface":[{"n":1}]},"TABLE_pfc_interface":{"ROW_pfc_interface":[{"n":2,"n":3}]}}"#,
            r#"{"TABLE_pfc\u005finterface":{"ROW_pfc_interface":[{"if_name_str":"Eth\u00e91/1"}]}}"#,
            r#"{"TABLE_pfc_interface":{"ROW_pfc_interface":"text"}}"#,
            r#"{"TABLE_pfc_interface":{"ROW_pfc_interface":[1,"x",null,[{"n":1}]]}}"#,
            r#"{"TABLE_pfc_interface":[{"ROW_pfc_interface":[{"n":1}]}]}"#,
            "switch# show interface priority-flow-control | json\n{\"body\":{}}",
            // whitespace everywhere, brackets, quotes and escapes inside strings, every scalar
            "{ \"TABLE_pfc_interface\" :\r\n\t{ \"ROW_pfc_interface\" : [ { \"n\" : \"a]}\\\"{[\\\\\" , \"m\" : [ ] } , { } , -1.5e3 , 0 , true , false , null ] } }  ",
            // serde_json's RawValue token is a key like any other
            r#"{"$serde_json::private::RawValue":"[1]","TABLE_pfc_interface":{"ROW_pfc_interface":{"n":1}}}"#,
            // what the tree refuses, with its message
            r#"{"TABLE_pfc_interface":{"ROW_pfc_interface":[{"n":1e400}]}}"#,
            r#"{"a":1}} trailing"#,
            r#"{"a":"\ud800"}"#,
            "{\"a\":\"tab\there\"}",
            r#"{"a":[1,2,}"#,
            r#"{"a":-}"#,
            r#"{"a":18446744073709551616}"#,
        ];
        let deep = format!(
            "{}{}",
            "{\"a\":".repeat(200),
            "1".to_string() + &"}".repeat(200)
        );
        for d in docs.iter().copied().chain([deep.as_str()]) {
            assert_eq!(lazy(d, T), tree(d, T), "{d}");
        }
        assert!(tree(docs[0], T).expect("rows").len() == 2);
        assert!(tree(&deep, T).is_err());
    }

    /// A JSON value of any shape, its objects often holding the table.
    fn any_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "[a-z\"\\\\{}\\[\\],: \\n\\t\u{e9}\u{202e}]{0,6}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 5, |inner| {
            let key = prop_oneof![
                Just("TABLE_pfc_interface".to_string()),
                Just("ROW_pfc_interface".to_string()),
                Just("body".to_string()),
                Just("result".to_string()),
                "[a-z\"]{0,3}",
            ];
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                proptest::collection::vec((key, inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Whatever the shape, compact or pretty, the walk over the text finds the tree's rows.
        #[test]
        fn any_document_gives_the_rows_of_the_tree(v in any_json(), pretty: bool) {
            let body = serde_json::json!({ "body": v });
            let text = if pretty {
                serde_json::to_string_pretty(&body)
            } else {
                serde_json::to_string(&body)
            }
            .expect("serializable");
            proptest::prop_assert_eq!(lazy(&text, "TABLE_pfc_interface"), tree(&text, "TABLE_pfc_interface"));
        }
    }

    /// Every NX-API capture of the fixture tree, for every table a parser reads.
    #[test]
    fn the_captured_replies_give_the_rows_of_the_tree() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/nxos");
        let mut files = Vec::new();
        let mut stack = vec![std::path::PathBuf::from(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("fixture dir").flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if !p.to_string_lossy().contains(".expected.") {
                    files.push(p);
                }
            }
        }
        let mut with_rows = 0;
        for f in files {
            let text = String::from_utf8_lossy(&std::fs::read(&f).expect("read")).into_owned();
            if json_text(&text).is_none() {
                continue;
            }
            for t in [
                "TABLE_pfc_interface",
                "TABLE_flowcontrol",
                "TABLE_interface",
            ] {
                let want = tree(&text, t);
                with_rows += usize::from(want.as_ref().is_ok_and(|r| !r.is_empty()));
                assert_eq!(lazy(&text, t), want, "{} {t}", f.display());
            }
        }
        assert!(with_rows >= 3, "only {with_rows} captures with rows");
    }
}
