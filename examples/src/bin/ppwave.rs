//! `ppwave`: the acoustic wave simulator's command-line program (work in progress).
fn main() {
    eprintln!("ppwave: not implemented yet");
    std::process::exit(2);
}
