//! The README's tunables table is the registry's table, word for word.

#[test]
fn readme_table_matches_the_registry() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let table = rayforce_tunables::registry::markdown_table();
    assert!(
        readme.contains(&table),
        "README.md's tunables table is out of date; replace it with:\n{table}"
    );
}
