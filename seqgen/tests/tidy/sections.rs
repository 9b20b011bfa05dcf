//! Pointers to a section: `see "Gapless mode"`, the guide's "Numbers that do not reveal volume",
//! "Operations" section. Each must name a heading that exists somewhere in the repository (a
//! Markdown heading, or a `//! #` heading of the docs), its first words at least: a reader
//! sent to a section that was renamed or never written finds nothing. So must every alert
//! rule's `runbook_url`, a section of the guide.

use std::collections::BTreeSet;
use std::path::Path;

/// The files pointers are looked for in: the repository's text, but the CHANGELOG (its older
/// sections name headings as they were then).
fn scanned(path: &str) -> bool {
    let text = [
        ".md", ".rs", ".toml", ".yaml", ".yml", ".sh", ".py", ".service",
    ];
    text.iter().any(|ext| path.ends_with(ext)) && path != "CHANGELOG.md"
}

/// Every heading, with its file: Markdown's `# …` lines and the docs' `//! # …` lines (code
/// blocks' `# ` lines hide a doc test's set-up, so a heading must start with a capital or a
/// backtick).
fn headings(root: &Path, tree: &BTreeSet<String>) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for path in tree
        .iter()
        .filter(|p| p.ends_with(".md") || p.ends_with(".rs"))
    {
        let text = std::fs::read_to_string(root.join(path)).unwrap_or_default();
        for line in text.lines() {
            let line = line.trim_start();
            let line = line.strip_prefix("//!").map_or(line, str::trim_start);
            let Some(rest) = line.strip_prefix('#') else {
                continue;
            };
            let title = rest.trim_start_matches('#').trim();
            if title.starts_with(|c: char| c.is_uppercase() || c == '`') {
                found.push((path.clone(), title.to_lowercase()));
            }
        }
    }
    found
}

/// A pointer: the section's name, and whether it says the section is in the README.
#[derive(Debug, PartialEq)]
struct Pointer<'a> {
    name: &'a str,
    in_readme: bool,
}

/// The quoted names in `text` that read as pointers to a section: after `see `, `guide's ` or
/// `README's `, or before ` section` or ` in the README`.
fn pointers(text: &str) -> Vec<Pointer<'_>> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(['"', '“']) {
        let quote_len = rest[open..].chars().next().unwrap().len_utf8();
        let after_open = &rest[open + quote_len..];
        let Some(close) = after_open.find(['"', '”']) else {
            break;
        };
        let name = &after_open[..close];
        let close_len = after_open[close..].chars().next().unwrap().len_utf8();
        let after = &after_open[close + close_len..];
        let lead = rest[..open].trim_end_matches(['(', ' ']).to_lowercase();
        let pointed = ["see", "guide's", "readme's"]
            .iter()
            .any(|w| lead.ends_with(w))
            || after.starts_with(" section")
            || after.starts_with(" in the README");
        let plain = !name.is_empty()
            && name.len() <= 80
            && name.starts_with(|c: char| c.is_uppercase())
            && !name.contains(['{', '\\', '\n', '`']);
        let in_readme = lead.ends_with("readme's")
            || after.starts_with(" in the README")
            || after.starts_with(" section of seqgen's README");
        if pointed && plain {
            found.push(Pointer { name, in_readme });
        }
        rest = after;
    }
    found
}

/// `text` as one line, comment markers dropped: a name wrapped across two lines of a comment
/// or a paragraph reads as one.
fn flattened(text: &str) -> String {
    let lines = text.lines().map(|line| {
        let line = line.trim_start();
        ["//!", "///", "//", "#"]
            .iter()
            .find_map(|marker| line.strip_prefix(marker))
            .unwrap_or(line)
            .trim()
    });
    lines.collect::<Vec<_>>().join(" ")
}

/// The pointers of the repository that name no heading: `(file, name)`.
pub fn dangling(root: &Path, tree: &BTreeSet<String>) -> Vec<(String, String)> {
    let headings = headings(root, tree);
    let mut missing = Vec::new();
    for path in tree.iter().filter(|p| scanned(p)) {
        let text = flattened(&std::fs::read_to_string(root.join(path)).unwrap_or_default());
        for pointer in pointers(&text) {
            let wanted = pointer.name.to_lowercase();
            let found = headings.iter().any(|(file, heading)| {
                heading.starts_with(&wanted) && (!pointer.in_readme || file == "README.md")
            });
            if !found {
                missing.push((path.clone(), pointer.name.to_owned()));
            }
        }
    }
    missing
}

/// The alert rules (`contrib/prometheus/seqgen.rules.yml`) without a `runbook_url`, or whose
/// link is not a section of the guide module it names (rustdoc's anchor of a heading: lower
/// case, spaces as `-`, punctuation dropped).
pub fn runbooks_dangling(root: &Path) -> Vec<String> {
    let rules = std::fs::read_to_string(root.join("contrib/prometheus/seqgen.rules.yml")).unwrap();
    let mut wrong = Vec::new();
    for alert in rules.split("- alert: ").skip(1) {
        let name = alert.lines().next().unwrap_or_default().trim();
        let link = alert
            .lines()
            .find_map(|line| line.trim().strip_prefix("runbook_url: "))
            .map(|url| url.trim_matches('"'));
        let Some((module, anchor)) = link
            .and_then(|url| url.split("/diesel_seqgen/guide/").nth(1))
            .and_then(|rest| rest.split_once("/index.html#"))
        else {
            wrong.push(format!("{name}: no runbook_url into the guide"));
            continue;
        };
        let guide = std::fs::read_to_string(root.join(format!("seqgen/src/guide/{module}.rs")))
            .unwrap_or_default();
        let anchors: Vec<String> = guide
            .lines()
            .filter_map(|line| line.strip_prefix("//! #"))
            .map(|heading| {
                let title = heading.trim_start_matches('#').trim().to_lowercase();
                title
                    .chars()
                    .filter_map(|c| match c {
                        ' ' => Some('-'),
                        c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        if !anchors.iter().any(|a| a == anchor) {
            wrong.push(format!("{name}: guide::{module} has no section #{anchor}"));
        }
    }
    wrong
}

#[test]
fn pointers_are_read_as_a_reader_does() {
    let text = r#"see "Try it" in the README; the guide's "Numbers" part; "Operations"
        section; a "quoted" word; see "{}" formatted"#;
    let text = flattened(text);
    let found: Vec<(&str, bool)> = pointers(&text)
        .into_iter()
        .map(|p| (p.name, p.in_readme))
        .collect();
    assert_eq!(
        found,
        [("Try it", true), ("Numbers", false), ("Operations", false)]
    );
}
