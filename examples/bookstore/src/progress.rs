//! The progress bar of a run (on a terminal only): orders done, a whole-number rate and the
//! time left, e.g. `[=====>    ] 1200/2000 orders (1381 orders/s, 1s left)`.

use indicatif::{ProgressBar, ProgressState, ProgressStyle};

use crate::Result;

/// The bar's look: indicatif's own `{per_sec}` prints `1,381.1747/s`, so the rate is a key of
/// its own, rounded to whole orders.
pub fn style() -> Result<ProgressStyle> {
    Ok(ProgressStyle::with_template(
        "{spinner} {msg} [{bar:40}] {pos}/{len} orders ({rate}, {eta} left)",
    )
    .map_err(|e| e.to_string())?
    .with_key(
        "rate",
        |state: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{:.0} orders/s", state.per_sec());
        },
    )
    .progress_chars("=> "))
}

/// A bar for `orders` orders of `instances` instances; hidden when stderr is not a terminal.
pub fn bar(orders: u32, instances: u32) -> Result<ProgressBar> {
    let bar = ProgressBar::new(u64::from(orders));
    bar.set_style(style()?);
    bar.set_message(format!("{instances} instances"));
    Ok(bar)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use indicatif::{ProgressDrawTarget, TermLike};

    use super::*;

    /// A terminal that keeps what is written to it.
    #[derive(Debug, Clone, Default)]
    struct Screen(Arc<Mutex<String>>);

    impl TermLike for Screen {
        fn width(&self) -> u16 {
            120
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(s)?;
            self.write_str("\n")
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.0.lock().unwrap().push_str(s);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            self.write_str("\n")
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_rate_is_a_whole_number_and_the_time_left_is_shown() {
        let screen = Screen::default();
        let bar = bar(1000, 4).unwrap();
        bar.set_draw_target(ProgressDrawTarget::term_like(Box::new(screen.clone())));
        for _ in 0..10 {
            std::thread::sleep(std::time::Duration::from_millis(60));
            bar.inc(50);
        }
        bar.tick();
        let text = screen.0.lock().unwrap().clone();
        let last = text.lines().rev().find(|l| l.contains("orders (")).unwrap();
        // "… 500/1000 orders (833 orders/s, 1s left)"
        let rate = last.split("orders (").nth(1).unwrap();
        let (number, rest) = rate.split_once(" orders/s, ").unwrap();
        assert!(
            !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()),
            "{last}"
        );
        assert!(rest.trim_end().ends_with(" left)"), "{last}");
        assert!(last.contains("500/1000 orders"), "{last}");
        assert!(last.contains("4 instances"), "{last}");
    }
}
