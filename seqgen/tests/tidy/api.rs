//! The public API as the sources declare it, read without compiling: enough to tell whether
//! a path a document names (`diesel_seqgen::global::next_id`) still leads to an item.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The crates whose paths documents name, and their source folders.
const CRATES: &[(&str, &str)] = &[
    ("diesel_seqgen", "seqgen/src"),
    ("diesel_seqgen_core", "seqgen-core/src"),
];

/// What a module makes public: its items (and what it re-exports), and which of them are
/// modules with a file of their own.
#[derive(Default)]
struct Module {
    items: BTreeSet<String>,
    modules: BTreeSet<String>,
    /// It re-exports a glob (`pub use x::*`): any name may come from there.
    glob: bool,
}

/// Every public module of the crates, by crate and module path (`""` for the root).
pub struct Api {
    modules: BTreeMap<(String, String), Module>,
    /// Every crate's source, for what follows a type (methods, variants, associated items).
    text: String,
}

impl Api {
    pub fn read(root: &Path) -> Api {
        let mut api = Api {
            modules: BTreeMap::new(),
            text: String::new(),
        };
        for (krate, dir) in CRATES {
            let dir = root.join(dir);
            let mut stack = vec![dir.clone()];
            while let Some(folder) = stack.pop() {
                for entry in std::fs::read_dir(&folder).unwrap().flatten() {
                    let path = entry.path();
                    if path.is_dir() {
                        stack.push(path);
                        continue;
                    }
                    if path.extension().is_none_or(|e| e != "rs") {
                        continue;
                    }
                    let relative = path
                        .strip_prefix(&dir)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/");
                    let module = relative
                        .trim_end_matches(".rs")
                        .trim_end_matches("/mod")
                        .trim_end_matches("lib")
                        .trim_end_matches('/')
                        .replace('/', "::");
                    let text = std::fs::read_to_string(&path).unwrap();
                    api.text.push_str(&text);
                    let declared = declared(&text);
                    api.modules.insert((krate.to_string(), module), declared);
                }
            }
        }
        api
    }

    /// Whether `path` (`diesel_seqgen::a::b`) leads to a public module or item.
    pub fn resolves(&self, path: &str) -> bool {
        let mut segments = path.split("::");
        let krate = segments.next().unwrap_or_default().to_owned();
        let mut module = String::new();
        let segments: Vec<&str> = segments.collect();
        for (i, segment) in segments.iter().enumerate() {
            let Some(here) = self.modules.get(&(krate.clone(), module.clone())) else {
                return true; // an inline module (`pub mod x { … }`): not read further
            };
            if here.modules.contains(*segment) {
                module = if module.is_empty() {
                    segment.to_string()
                } else {
                    format!("{module}::{segment}")
                };
                continue;
            }
            if here.items.contains(*segment) {
                // After a type: methods, variants, associated items, declared anywhere.
                return segments[i + 1..].iter().all(|rest| self.mentions(rest));
            }
            return here.glob;
        }
        true
    }

    /// Whether some source declares or names `word` (as a whole word).
    fn mentions(&self, word: &str) -> bool {
        self.text.match_indices(word).any(|(i, _)| {
            let before = self.text[..i].chars().next_back();
            let after = self.text[i + word.len()..].chars().next();
            let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            !part(before) && !part(after)
        })
    }
}

/// What a file declares public: `pub fn|struct|enum|trait|type|const|static|mod NAME`, the
/// names a `pub use` brings in, and exported macros.
fn declared(text: &str) -> Module {
    let mut module = Module::default();
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '#'))
        .filter(|w| !w.is_empty())
        .collect();
    for (i, word) in words.iter().enumerate() {
        if *word != "pub" {
            continue;
        }
        // `pub(crate)` splits into `pub`, `crate`: not public.
        let rest = &words[i + 1..];
        let rest = match rest.first() {
            Some(&"async") | Some(&"unsafe") => &rest[1..],
            _ => rest,
        };
        if let [kind, name, ..] = rest {
            let name = name.trim_start_matches("r#").to_owned();
            match *kind {
                "mod" => {
                    module.modules.insert(name.clone());
                    module.items.insert(name);
                }
                "fn" | "struct" | "enum" | "trait" | "type" | "const" | "static" | "union" => {
                    module.items.insert(name);
                }
                _ => {}
            }
        }
    }
    // `pub use a::b::{C, d::E as F};`: the last name of each leaf, after any `as`.
    for statement in text.split("pub use ").skip(1) {
        let statement = statement.split(';').next().unwrap_or_default();
        if statement.contains('*') {
            module.glob = true;
        }
        for leaf in statement.split([',', '{', '}']) {
            let leaf = leaf.trim();
            let name = leaf.rsplit(" as ").next().unwrap_or(leaf);
            let name = name.rsplit("::").next().unwrap_or(name).trim();
            if !name.is_empty() && name != "self" && name != "*" {
                module.items.insert(name.to_owned());
            }
        }
    }
    for (i, _) in text.match_indices("#[macro_export]") {
        let after = &text[i..];
        if let Some(name) = after.split("macro_rules!").nth(1) {
            let name: String = name
                .trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            module.items.insert(name);
        }
    }
    module
}

/// The API paths a text names: `diesel_seqgen::…` and `diesel_seqgen_core::…`, up to what
/// follows the last name (`{`, `(`, `…`).
pub fn paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (krate, _) in CRATES {
        let prefix = format!("{krate}::");
        for (i, _) in text.match_indices(&prefix) {
            let before = text[..i].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue; // inside a longer name
            }
            let path: String = text[i..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':' || *c == '#')
                .collect();
            let path = path.trim_end_matches(':').to_owned();
            if path.len() > krate.len() {
                found.push(path);
            }
        }
    }
    found
}
