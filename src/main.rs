//! The `fleetc` binary: parses arguments and exits with the code the library returns.

fn main() {
    std::process::exit(fleetc::run(std::env::args_os()));
}
