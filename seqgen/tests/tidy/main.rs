//! The house rules of the docs, as a test (rust-analyzer's `xtask/src/tidy.rs` is the model):
//! what the README, `ARCHITECTURE.md`, the user guide, the CHANGELOG's current section, the
//! crates' READMEs, the manifests' comments and the error messages name must exist.
//!
//! - every file path they name exists (a path may be written from any folder: it is found when
//!   a file of the repository ends with it);
//! - every public API path (`diesel_seqgen::…`, `diesel_seqgen_core::…`) resolves to an item;
//! - no name removed with 0.1 appears outside the upgrade tables;
//! - every figure of the README's speed section appears in `BENCHMARKS.md`;
//! - the derive's attribute table exists once (`guide::derive`) and names every key the derive
//!   takes; `ARCHITECTURE.md` names every folder of `seqgen/src`;
//! - every `rerun-if-changed` path of a build script exists;
//! - every pointer to a section (`see "Gapless mode"`) names a heading that exists, and every
//!   alert rule links to a section of the guide.
//!
//! It reads the repository around the crate, so it runs from a checkout only (a packaged crate
//! skips it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod api;
mod sections;

use api::Api;

/// The repository's root, when this crate sits in its checkout.
fn root() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()?
        .to_path_buf();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).ok()?;
    manifest.contains("[workspace]").then_some(root)
}

/// Every file and folder of the repository, relative to its root, with `/` separators (build
/// output, the fuzz corpus and version control left out).
fn tree(root: &Path) -> BTreeSet<String> {
    // The fuzz corpus is named, never read through: its folders are kept, not their files.
    let (skip, shallow) = (["target", ".git", "artifacts"], ["corpus"]);
    let mut found = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if skip.contains(&name.as_str()) {
                continue;
            }
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if path.is_dir() {
                found.insert(format!("{relative}/"));
                if !shallow.contains(&name.as_str()) {
                    stack.push(path);
                }
            } else {
                found.insert(relative);
            }
        }
    }
    found
}

/// A document the rules apply to: where it is, and its text (for a Rust file, its comments and
/// string literals are what matter, and the whole text is read).
struct Doc {
    name: String,
    text: String,
}

fn read(root: &Path, path: &str) -> String {
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The documents: READMEs, `ARCHITECTURE.md`, the guide, the CHANGELOG's current section, the
/// manifests' comments, and the files that hold error messages and help texts.
fn docs(root: &Path, tree: &BTreeSet<String>) -> Vec<Doc> {
    let mut docs = Vec::new();
    let whole = [
        "README.md",
        "ARCHITECTURE.md",
        "seqgen-core/README.md",
        "seqgen-derive/README.md",
        "seqgen-cli/README.md",
        "seqgen/src/error.rs",
        "seqgen-core/src/error.rs",
        "seqgen-cli/src/main.rs",
        "seqgen-cli/src/failure.rs",
        "seqgen/src/lib.rs",
    ];
    for path in whole {
        docs.push(Doc {
            name: path.to_owned(),
            text: read(root, path),
        });
    }
    for path in tree.iter().filter(|p| p.starts_with("seqgen/src/guide/")) {
        if path.ends_with(".rs") {
            docs.push(Doc {
                name: path.clone(),
                text: read(root, path),
            });
        }
    }
    let changelog = read(root, "CHANGELOG.md");
    let current = changelog.split("\n## ").nth(1).unwrap_or_default();
    docs.push(Doc {
        name: "CHANGELOG.md (current section)".to_owned(),
        text: current.to_owned(),
    });
    for path in tree.iter().filter(|p| p.ends_with("Cargo.toml")) {
        let manifest = read(root, path);
        let comments: Vec<&str> = manifest
            .lines()
            .map(str::trim_start)
            .filter(|line| line.starts_with('#') && !line.starts_with("#["))
            .map(|line| line.trim_start_matches('#'))
            .collect();
        docs.push(Doc {
            name: format!("{path} (comments)"),
            text: comments.join("\n"),
        });
    }
    docs
}

/// The text between backticks, each once per document.
fn quoted(text: &str) -> BTreeSet<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// Files of the user's project the docs name (`diesel.toml`), never of this repository.
const USERS_FILES: &[&str] = &["diesel.toml", "src/schema.rs", "schema.rs", "migrations/"];

/// Whether `text` reads as a path of the repository: a file name with a known extension, or
/// folders separated by `/` whose first is a folder of the repository (not `Europe/Paris`).
/// Not an absolute path (`/tmp/…`), a URL, a dot-name (`.env`) but `.ci/`'s, or one of
/// [`USERS_FILES`].
fn looks_like_path(tree: &BTreeSet<String>, text: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "_-./".contains(c);
    let extensions = [".rs", ".md", ".toml", ".sql", ".py", ".sh", ".json", ".yml"];
    if text.is_empty()
        || !text.chars().all(allowed)
        || text.starts_with('/')
        || !text.chars().any(|c| c.is_ascii_alphabetic())
        || (text.starts_with('.') && !text.starts_with(".ci/"))
        || USERS_FILES.contains(&text)
    {
        return false;
    }
    if extensions.iter().any(|e| text.ends_with(e)) {
        return true;
    }
    let first = text.split('/').next().unwrap_or_default();
    text.contains('/')
        && tree
            .iter()
            .any(|p| p == &format!("{first}/") || p.ends_with(&format!("/{first}/")))
}

#[test]
fn docs_name_only_what_exists() {
    let Some(root) = root() else {
        println!("skipping the tidy test: not in a checkout of the repository");
        return;
    };
    let tree = tree(&root);
    let api = Api::read(&root);
    let mut missing: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for doc in docs(&root, &tree) {
        for text in quoted(&doc.text) {
            let path = text.trim_end_matches('/');
            if looks_like_path(&tree, text) && !exists(&tree, path) {
                missing
                    .entry(doc.name.clone())
                    .or_default()
                    .insert(format!("path `{text}`"));
            }
        }
        for path in api::paths(&doc.text) {
            if !api.resolves(&path) {
                missing
                    .entry(doc.name.clone())
                    .or_default()
                    .insert(format!("API `{path}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "names that no longer exist:\n{missing:#?}"
    );
}

/// Whether `path` is a file or folder of the repository, named from its root or from any
/// folder in it.
fn exists(tree: &BTreeSet<String>, path: &str) -> bool {
    tree.iter().any(|file| {
        let file = file.trim_end_matches('/');
        file == path || file.ends_with(&format!("/{path}"))
    })
}

/// Names 0.1 had and 0.2 removed: only the upgrade tables may say them.
const REMOVED: &[&str] = &[
    "r#async",
    "next_id_in",
    "next_ids_in",
    "next_number_in",
    "next_numbers_in",
    "last_value_in",
    "peek_next_in",
    "void_in",
    "voided_in",
    "gaps_in",
    "assign_ids_with",
    "seqgen::use_pool",
    "seqgen::next_id",
];

#[test]
fn removed_names_only_in_the_upgrade_tables() {
    let Some(root) = root() else { return };
    let tree = tree(&root);
    let mut found = Vec::new();
    for doc in docs(&root, &tree) {
        for (number, line) in doc.text.lines().enumerate() {
            // A row of an upgrade table: `| 0.1 name | 0.2 name |`.
            let upgrade_row = line.trim_start().starts_with("| `") && line.contains(" | ");
            for name in REMOVED {
                let at_word = line.match_indices(name).any(|(i, _)| {
                    let before = line[..i].chars().next_back();
                    let after = line[i + name.len()..].chars().next();
                    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                    !word(before) && !word(after)
                });
                if at_word && !upgrade_row {
                    found.push(format!("{}:{}: {name}", doc.name, number + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "0.1 names outside the upgrade tables:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_readmes_figures_are_benchmarks_figures() {
    let Some(root) = root() else { return };
    let readme = read(&root, "README.md");
    let benchmarks = read(&root, "BENCHMARKS.md");
    let speed = readme
        .split("## Speed, in short")
        .nth(1)
        .expect("the README's speed section")
        .split("\n## ")
        .next()
        .unwrap();
    let known = numbers(&benchmarks);
    let missing: Vec<String> = figures(speed)
        .into_iter()
        .filter(|figure| !known.contains(figure))
        .collect();
    assert!(
        missing.is_empty(),
        "README figures not in BENCHMARKS.md: {missing:?}"
    );
}

/// Every number of a text (`1.57`, `2,253`), as written.
fn numbers(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphanumeric()) {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || (".,".contains(chars[i])
                        && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
            {
                i += 1;
            }
            found.insert(chars[start..i].iter().collect());
        }
        i += 1;
    }
    found
}

/// The measured figures of a text: the numbers (each end of a range such as `0.98–1.04×`)
/// followed by `×` or a unit (`ns`, `tx/s`).
fn figures(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for unit in ["×", " ns", " tx/s"] {
        for (i, _) in text.match_indices(unit) {
            let before: String = text[..i]
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_digit() || ".,–".contains(*c))
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            for number in before.split('–').filter(|n| !n.is_empty()) {
                found.push(number.trim_matches([',', '.']).to_owned());
            }
        }
    }
    found
}

#[test]
fn one_attribute_table_with_every_key() {
    let Some(root) = root() else { return };
    let tree = tree(&root);
    let header = "| key | default | meaning |";
    let holders: Vec<String> = docs(&root, &tree)
        .into_iter()
        .filter(|doc| doc.text.contains(header))
        .map(|doc| doc.name)
        .collect();
    assert_eq!(
        holders,
        ["seqgen/src/guide/derive.rs"],
        "the derive's attribute table"
    );
    let guide = read(&root, "seqgen/src/guide/derive.rs");
    let attr = read(&root, "seqgen-derive/src/attr.rs");
    let keys = attr
        .lines()
        .find(|line| line.starts_with("const KEYS"))
        .expect("attr.rs's KEYS");
    for key in quoted(keys) {
        assert!(
            guide.contains(&format!("//! | `{key}")),
            "`{key}` is missing from the attribute table of guide::derive"
        );
    }
}

#[test]
fn architecture_names_every_folder_of_the_runtime() {
    let Some(root) = root() else { return };
    let architecture = read(&root, "ARCHITECTURE.md");
    for folder in tree(&root)
        .iter()
        .filter(|p| p.starts_with("seqgen/src/") && p.ends_with('/'))
    {
        let folder = folder.trim_start_matches("seqgen/src/");
        if folder.is_empty() {
            continue;
        }
        assert!(
            architecture.contains(&format!("`{folder}`")),
            "ARCHITECTURE.md does not name `{folder}`"
        );
    }
}

#[test]
fn build_scripts_watch_what_exists() {
    let Some(root) = root() else { return };
    for path in tree(&root).iter().filter(|p| p.ends_with("build.rs")) {
        let package = Path::new(path).parent().unwrap();
        for line in read(&root, path).lines() {
            if let Some(watched) = line.split("rerun-if-changed=").nth(1) {
                let watched = watched.trim_end_matches([')', ';', '"']);
                assert!(
                    root.join(package).join(watched).exists(),
                    "{path} watches `{watched}`, which does not exist"
                );
            }
        }
    }
}

#[test]
fn pointers_to_sections_name_headings_that_exist() {
    let Some(root) = root() else { return };
    let dangling = sections::dangling(&root, &tree(&root));
    assert!(
        dangling.is_empty(),
        "sections that do not exist: {dangling:#?}"
    );
    let runbooks = sections::runbooks_dangling(&root);
    assert!(runbooks.is_empty(), "alerts' runbooks: {runbooks:#?}");
}
