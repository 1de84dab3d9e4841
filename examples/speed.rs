fn main() {
    let t = std::time::Instant::now();
    let mut total = 0usize; let mut ev = 0usize;
    for e in std::fs::read_dir("/work/shared/fixtures/catalogs/v4.18").unwrap() {
        let p = e.unwrap().path().join("catalog.yaml");
        let s = std::fs::read_to_string(&p).unwrap();
        total += s.len();
        for r in saphyr_parser::Parser::new_from_str(&s) { r.unwrap(); ev += 1; }
    }
    let el = t.elapsed();
    println!("{} bytes {} events {:?} {:.1} MB/s", total, ev, el, total as f64 / el.as_secs_f64() / 1e6);
}
