//! NX-API tables read one row at a time. `json_doc` + `nxapi_bodies` + `find_rows` hold the whole
//! reply as a `serde_json::Value` tree, ~760 B a port: a 125k-port PFC reply is ~95 MB of tree
//! before the first sample (issue #22). Here the reply is walked as text instead: each object on
//! the way to the table is split into its keys and raw values (`&RawValue`, slices of the input),
//! the rows array into raw rows, and one row at a time becomes a `Value` for the parser's row
//! function, then is dropped. The rows, their order and each row's `Value` are those of the tree
//! walk (the tests compare both); a document the tree refuses is refused with the same message,
//! because it is first read by the same deserializer with a visitor that keeps nothing.

use super::common::{Acc, json_text};
use crate::metrics::Parsed;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// An NX-API reply's `TABLE_x` through `row`, one row at a time: `None` when `text` is not JSON
/// (the text parser's turn), an unknown line for invalid JSON or a reply without the table.
pub fn parse_rows(
    text: &str,
    table: &str,
    mut row: impl FnMut(&mut Parsed, &mut Acc, &Value),
) -> Option<Parsed> {
    let t = json_text(text)?;
    let mut p = Parsed::default();
    let rows = match rows_of(t, table) {
        Ok(r) => r,
        Err(e) => {
            p.unknown(&e);
            return Some(p);
        }
    };
    if rows.is_empty() {
        p.unknown(&format!("JSON without {table}"));
    }
    let mut acc = Acc::default();
    for raw in rows {
        match serde_json::from_str::<Value>(raw.get()) {
            Ok(r) => row(&mut p, &mut acc, &r),
            // Not reached: a part of a valid document is valid; if it were, nothing half-read.
            Err(e) => {
                let mut bad = Parsed::default();
                bad.unknown(&format!("invalid JSON: {e}"));
                return Some(bad);
            }
        }
    }
    Some(acc.into_parsed(p))
}

/// The rows `find_rows` finds in each of `nxapi_bodies` of the document `t`, in that order, as
/// raw JSON. `Err`: the message `json_doc` gives for `t`.
pub fn rows_of<'a>(t: &'a str, table: &str) -> Result<Vec<&'a RawValue>, String> {
    let bad = |e: serde_json::Error| format!("invalid JSON: {e}");
    serde_json::from_str::<Valid>(t).map_err(bad)?;
    let doc: &RawValue = serde_json::from_str(t).map_err(bad)?;
    let mut out = Vec::new();
    for body in bodies(doc)? {
        find(body, table, &mut out)?;
    }
    Ok(out)
}

type Obj<'a> = BTreeMap<String, &'a RawValue>;

/// The keys and raw values of an object (`None`: not an object). Duplicate keys: the last wins,
/// as in `Value`'s map.
fn object(v: &RawValue) -> Result<Option<Obj<'_>>, String> {
    if !v.get().starts_with('{') {
        return Ok(None);
    }
    serde_json::from_str(v.get())
        .map(Some)
        .map_err(|e| format!("invalid JSON: {e}"))
}

fn array(v: &RawValue) -> Result<Option<Vec<&RawValue>>, String> {
    if !v.get().starts_with('[') {
        return Ok(None);
    }
    serde_json::from_str(v.get())
        .map(Some)
        .map_err(|e| format!("invalid JSON: {e}"))
}

/// `Value::get(key)`: `None` on anything but an object.
fn get<'a>(v: &'a RawValue, key: &str) -> Result<Option<&'a RawValue>, String> {
    Ok(object(v)?.and_then(|mut m| m.remove(key)))
}

/// `common::each`: an array's elements, anything else alone.
fn each(v: &RawValue) -> Result<Vec<&RawValue>, String> {
    Ok(array(v)?.unwrap_or_else(|| vec![v]))
}

/// `common::nxapi_bodies`.
fn bodies(doc: &RawValue) -> Result<Vec<&RawValue>, String> {
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
    if let Some(res) = top.remove("result").filter(|r| r.get() != "null") {
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
fn find<'a>(v: &'a RawValue, table: &str, out: &mut Vec<&'a RawValue>) -> Result<(), String> {
    if let Some(m) = object(v)? {
        if let Some(t) = m.get(table) {
            let row_key = format!("ROW_{}", table.strip_prefix("TABLE_").unwrap_or(table));
            if let Some(r) = get(t, &row_key)? {
                match array(r)? {
                    Some(a) => out.extend(a),
                    None if r.get().starts_with('{') => out.push(r),
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
            .map(|r| serde_json::from_str(r.get()).expect("a valid row"))
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
