//! `ppwave run --config FILE`: a TOML file with one key per flag (same names), or the
//! run.json a run wrote (its `"config"` object holds the same keys).
//!
//! Checked key by key, so an error names the key: an unknown key gets the nearest valid one
//! (by edit distance), a value of the wrong type gets the key, the value and the expected
//! type. Relative paths in the file are relative to the file's directory.

use crate::cli::{RunArgs, CONFIG_KEYS};
use crate::BadInput;
use std::path::{Path, PathBuf};

/// The Levenshtein edit distance between `a` and `b` (insertions, deletions and
/// substitutions of one character each cost 1).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let subst = prev[j] + usize::from(ca != cb);
            cur[j + 1] = subst.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The valid key nearest to `key`, if it is close enough to be a likely typo (at most a
/// third of the key's length in edits, and at least 2 allowed), ignoring `_`/`-` and case.
pub fn nearest_key(key: &str) -> Option<&'static str> {
    let norm = key.to_ascii_lowercase().replace('_', "-");
    let limit = (norm.chars().count() / 3).max(2);
    CONFIG_KEYS
        .iter()
        .map(|&(k, _)| (edit_distance(&norm, k), k))
        .min()
        .filter(|&(d, _)| d <= limit)
        .map(|(_, k)| k)
}

/// Reads `path` as a `ppwave run` config file (a regular file of at most
/// [`TEXT_LIMIT`](crate::inputs::TEXT_LIMIT) bytes of UTF-8 text).
pub fn load(path: &Path) -> anyhow::Result<RunArgs> {
    let shown = path.display();
    let text = crate::inputs::read_text("--config", path, "a TOML config file")?;
    // The run.json a run wrote repeats it: its "config" object holds the same keys.
    if text.trim_start().starts_with('{') {
        let table = from_run_json(&text).map_err(|why| {
            BadInput(format!(
                "--config {shown}: {why}; give a TOML config file (`nz = 300`, one key per flag) \
                 or the run.json a ppwave run wrote"
            ))
        })?;
        let toml_text = toml::to_string(&table).map_err(|e| {
            BadInput(format!(
                "--config {shown}: its \"config\" object cannot be read ({e})"
            ))
        })?;
        return parse(&toml_text, &shown.to_string(), path.parent());
    }
    parse(&text, &shown.to_string(), path.parent())
}

/// The `"config"` object of a ppwave run.json, as a TOML table; the error says what is
/// missing.
fn from_run_json(text: &str) -> Result<toml::Table, String> {
    let json: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| format!("looks like JSON but is not valid JSON ({e})"))?;
    if json["program"] != "ppwave" {
        return Err(
            "is JSON but not a run.json written by ppwave (no \"program\": \"ppwave\")".into(),
        );
    }
    let config = json
        .get("config")
        .filter(|c| c.is_object())
        .ok_or("is a ppwave run.json without a \"config\" object")?;
    toml::Table::try_from(config).map_err(|e| format!("its \"config\" object cannot be read ({e})"))
}

/// Parses config `text` (named `name` in errors); relative paths are made relative to `dir`.
pub fn parse(text: &str, name: &str, dir: Option<&Path>) -> anyhow::Result<RunArgs> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        BadInput(format!(
            "--config {name}: not valid TOML: {}",
            e.to_string().trim_end()
        ))
    })?;
    for (key, value) in &table {
        let Some(&(_, expects)) = CONFIG_KEYS.iter().find(|(k, _)| k == key) else {
            let hint = if key == "config" {
                "; a config file cannot name another config file".to_string()
            } else {
                match nearest_key(key) {
                    Some(k) => format!("; did you mean `{k}`?"),
                    None => String::new(),
                }
            };
            let all: Vec<&str> = CONFIG_KEYS.iter().map(|(k, _)| *k).collect();
            return Err(BadInput(format!(
                "--config {name}: unknown key `{key}`{hint} (valid keys: {})",
                all.join(", ")
            ))
            .into());
        };
        // One key at a time, so that the error names it.
        let mut one = toml::Table::new();
        one.insert(key.clone(), value.clone());
        if let Err(e) = toml::Value::Table(one).try_into::<RunArgs>() {
            return Err(BadInput(format!(
                "--config {name}: `{key} = {value}`: {}; `{key}` takes {expects}",
                e.message().trim_end()
            ))
            .into());
        }
    }
    let mut args: RunArgs = toml::Value::Table(table)
        .try_into()
        .map_err(|e| BadInput(format!("--config {name}: {}", e.message().trim_end())))?;
    if let Some(dir) = dir {
        let rebase = |p: &mut Option<PathBuf>| {
            if let Some(p) = p.as_mut().filter(|p| p.is_relative()) {
                *p = dir.join(&*p);
            }
        };
        rebase(&mut args.velocity);
        rebase(&mut args.receiver_file);
        rebase(&mut args.out);
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Backend, Precision};

    #[test]
    fn edit_distance_by_hand() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("space-order", "space-order"), 0);
        assert_eq!(edit_distance("space-ordr", "space-order"), 1);
        assert_eq!(edit_distance("flaw", "lawn"), 2);
    }

    #[test]
    fn typos_get_the_nearest_key_and_nonsense_gets_none() {
        assert_eq!(nearest_key("space_order"), Some("space-order"));
        assert_eq!(nearest_key("spaceorder"), Some("space-order"));
        assert_eq!(nearest_key("absorbing"), Some("absorb"));
        assert_eq!(nearest_key("layers"), Some("layer"));
        assert_eq!(nearest_key("NZ"), Some("nz"));
        assert_eq!(nearest_key("receiver"), Some("receivers"));
        assert_eq!(nearest_key("temperature"), None);
    }

    #[test]
    fn every_key_is_a_field_and_every_field_a_key() {
        let text = r#"
            backend = "serial"
            nz = 1
            nx = 2
            ny = 12
            src-y = 13
            nt = 3
            dt = 0.5
            dh = 4
            src-z = 5
            src-x = 6
            fpeak = 7.5
            vmin = 8
            layer = ["1:2:3"]
            kernels = "split"
            space-order = 8
            absorb = 9
            boundary = "sponge"
            pml-r = 0.01
            pml-degree = 3
            pml-alpha = 40
            source-mode = "add"
            source-delay = 0.25
            receivers = ["1:0:10:2"]
            receiver-file = "r.txt"
            velocity = "/abs/v.npy"
            snapshot-every = 10
            time-block = "8:16"
            gather-gain = "agc"
            precision = "f64"
            numerics = "fast"
            subnormals = "keep"
            threads = 11
            out = "o"
        "#;
        let a = parse(text, "t.toml", Some(Path::new("base"))).expect("parses");
        assert_eq!(a.backend, Some(Backend::Serial));
        assert_eq!((a.nz, a.nx, a.nt), (Some(1), Some(2), Some(3)));
        assert_eq!((a.dt, a.dh), (Some(0.5), Some(4.0)));
        assert_eq!(
            (a.space_order, a.absorb, a.threads),
            (Some(8), Some(9), Some(11))
        );
        assert_eq!(a.precision, Some(Precision::F64));
        assert_eq!(a.numerics, Some(crate::cli::ArithmeticArg::Fast));
        assert_eq!(a.subnormals, Some(crate::cli::SubnormalsArg::Keep));
        assert_eq!((a.ny, a.src_y), (Some(12), Some(13)));
        assert_eq!(a.layers.as_ref().map(|l| l[0].z1), Some(2));
        assert_eq!(a.receivers.as_ref().map(|r| r[0].step), Some(2));
        // Relative paths follow the file; absolute ones stay.
        assert_eq!(a.receiver_file, Some(Path::new("base").join("r.txt")));
        assert_eq!(a.out, Some(Path::new("base").join("o")));
        assert_eq!(a.velocity, Some(PathBuf::from("/abs/v.npy")));
        assert_eq!(
            a.time_block,
            Some(ppstencil::solver::TimeBlock::Fixed(
                ppstencil::solver::BlockPlan {
                    depth: 8,
                    band: 16,
                    tile: None
                }
            ))
        );
        // A depth may be written as a number.
        let b = parse("time-block = 4", "t.toml", None).expect("parses");
        assert_eq!(b.time_block, Some(ppstencil::solver::TimeBlock::Depth(4)));
        // Every key was set: serialising gives back exactly the key list.
        let json = serde_json::to_value(&a).expect("serialises");
        let mut keys: Vec<&str> = json
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        let mut want: Vec<&str> = CONFIG_KEYS.iter().map(|(k, _)| *k).collect();
        keys.sort_unstable();
        want.sort_unstable();
        assert_eq!(keys, want);
    }

    #[test]
    fn errors_name_the_key() {
        let err = |t: &str| parse(t, "c.toml", None).expect_err(t).to_string();
        let e = err("space_order = 8");
        assert!(
            e.contains("unknown key `space_order`") && e.contains("did you mean `space-order`?"),
            "{e}"
        );
        let e = err("nz = \"40\"");
        assert!(
            e.contains("`nz = \"40\"`") && e.contains("a whole number"),
            "{e}"
        );
        let e = err("nz = -1");
        assert!(e.contains("`nz = -1`"), "{e}");
        let e = err("layer = \"1:2:3\"");
        assert!(e.contains("`layer") && e.contains("an array of"), "{e}");
        let e = err("layer = [\"1:2\"]");
        assert!(e.contains("Z0:Z1:V") && e.contains("has 2 part(s)"), "{e}");
        let e = err("backend = \"opencl\"");
        assert!(e.contains("`backend") && e.contains("\"serial\""), "{e}");
        let e = err("config = \"other.toml\"");
        assert!(e.contains("cannot name another config file"), "{e}");
        let e = err("nz = ");
        assert!(e.contains("not valid TOML"), "{e}");
    }

    #[test]
    fn the_example_config_is_valid() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/shot.toml");
        let a = load(&path).expect("examples/configs/shot.toml parses");
        assert_eq!(
            (a.nz, a.nx, a.nt, a.absorb),
            (Some(400), Some(600), Some(1250), Some(60))
        );
        let c = a.config();
        assert_eq!(c.receivers.len(), 300);
        c.validate().expect("a valid run");
    }
}
