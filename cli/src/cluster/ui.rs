//! Where install and uninstall write their progress and ask for confirmation.

use std::io::{BufRead, IsTerminal, Write};

/// Progress lines and confirmations.
pub trait Ui: Send {
    /// One progress line.
    fn line(&mut self, s: &str);
    /// Why the command failed (OLM's reason and message, a timeout, what to do).
    fn error(&mut self, s: &str);
    /// Asks a yes/no question; `None` when nobody can answer (stdin is not a terminal).
    fn confirm(&mut self, question: &str) -> Option<bool>;
}

/// The terminal: lines on stdout, questions on stderr answered on stdin when it is a terminal.
pub struct Terminal;

impl Ui for Terminal {
    fn line(&mut self, s: &str) {
        crate::term::out(&format!("{}\n", olmctl::text::esc(s)));
    }

    fn error(&mut self, s: &str) {
        crate::term::error(s);
    }

    fn confirm(&mut self, question: &str) -> Option<bool> {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return None;
        }
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "{} [y/N] ", olmctl::text::esc(question));
        let _ = e.flush();
        let mut answer = String::new();
        stdin.lock().read_line(&mut answer).ok()?;
        Some(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes" | "YES"))
    }
}

/// A recording UI for tests: the lines written, the questions asked, scripted answers.
#[derive(Debug, Default)]
pub struct Recorder {
    /// Lines, in order.
    pub lines: Vec<String>,
    /// Errors, in order.
    pub errors: Vec<String>,
    /// Questions, in order.
    pub asked: Vec<String>,
    /// Answers given to the questions in turn (`None`: nobody to ask); none left is `None`.
    pub answers: std::collections::VecDeque<Option<bool>>,
}

impl Ui for Recorder {
    fn line(&mut self, s: &str) {
        self.lines.push(s.to_string());
    }

    fn error(&mut self, s: &str) {
        self.errors.push(s.to_string());
    }

    fn confirm(&mut self, question: &str) -> Option<bool> {
        self.asked.push(question.to_string());
        self.answers.pop_front().flatten()
    }
}
