//! Running one image operation of the library ([`olmctl::build`]) and printing its
//! outcome: refused findings and their message, or the delivered image.

use olmctl::build::Refused;

use crate::term::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Output, error, runtime};

/// Runs `op` on a fresh runtime; on success prints the delivered image (with the JSON fields
/// `extra` gives), on refusal the findings and the message; returns the exit status.
pub fn run<T>(
    op: impl std::future::Future<Output = Result<T, Refused>>,
    output: Output,
    show: impl FnOnce(&T) -> (&olmctl::oci::deliver::Delivered, serde_json::Value),
) -> u8 {
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(c) => return c,
    };
    match rt.block_on(op) {
        Ok(built) => {
            let (d, extra) = show(&built);
            crate::report::delivered(d, output, extra);
            EXIT_OK
        }
        Err(Refused::Usage(e)) => {
            error(e);
            EXIT_USAGE
        }
        Err(Refused::Findings { errors, message }) => {
            eprint!("{}", olmctl::diag::render_text(&errors, false));
            error(message);
            EXIT_FINDINGS
        }
    }
}
