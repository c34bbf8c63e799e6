//! `window "sat,sun 02:00-06:00"`: a maintenance window, in UTC, outside which `fleetc upgrade`
//! starts no disruptive step (a node's upgrade, `upgrade-k8s`). The days are those the window
//! opens on (none written: every day); an end before the start runs past midnight into the
//! next day. Only `apply`'s stages read it, against a clock they are given: the build never
//! looks at the time.

use std::fmt;
use std::str::FromStr;

const DAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/// A weekly maintenance window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Bit `i` set: the window opens on `DAYS[i]` (Monday first). All set when none written.
    pub days: u8,
    /// Minutes after midnight, UTC.
    pub start: u16,
    pub end: u16,
}

fn minutes(hhmm: &str) -> Result<u16, String> {
    let (h, m) = hhmm.split_once(':').ok_or_else(|| format!("`{hhmm}` is not a time (HH:MM)"))?;
    let h: u16 = h.parse().map_err(|_| format!("`{hhmm}` is not a time (HH:MM)"))?;
    let m: u16 = m.parse().map_err(|_| format!("`{hhmm}` is not a time (HH:MM)"))?;
    if h > 24 || m > 59 || (h == 24 && m != 0) || m.to_string().len() > 2 {
        return Err(format!("`{hhmm}` is not a time of day (00:00 to 24:00)"));
    }
    Ok(h * 60 + m)
}

impl FromStr for Window {
    type Err = String;
    fn from_str(s: &str) -> Result<Window, String> {
        let s = s.trim();
        let (days, span) = match s.rsplit_once(' ') {
            Some((d, t)) => (Some(d.trim()), t),
            None => (None, s),
        };
        let mut mask = 0u8;
        for d in days.into_iter().flat_map(|d| d.split(',')).map(str::trim).filter(|d| !d.is_empty()) {
            let i = DAYS
                .iter()
                .position(|x| x.eq_ignore_ascii_case(d))
                .ok_or_else(|| format!("`{d}` is not a day (mon, tue, wed, thu, fri, sat, sun)"))?;
            mask |= 1 << i;
        }
        let (a, b) = span.split_once('-').ok_or_else(|| format!("`{span}` is not a span of time (HH:MM-HH:MM)"))?;
        let (start, end) = (minutes(a)?, minutes(b)?);
        if start == end {
            return Err(format!("`{span}` is empty: its start and end are the same"));
        }
        Ok(Window { days: if mask == 0 { 0x7f } else { mask }, start, end })
    }
}

impl Window {
    /// Whether the window is open at `unix` seconds (UTC).
    pub fn contains(&self, unix: u64) -> bool {
        let day = unix / 86_400;
        // 1970-01-01 was a Thursday (index 3, Monday first).
        let weekday = ((day + 3) % 7) as u8;
        let minute = ((unix % 86_400) / 60) as u16;
        let opens = |wd: u8| self.days & (1 << wd) != 0;
        if self.start < self.end {
            opens(weekday) && (self.start..self.end).contains(&minute)
        } else {
            // Past midnight: the evening part opens today, the morning part opened yesterday.
            (opens(weekday) && minute >= self.start) || (opens((weekday + 6) % 7) && minute < self.end)
        }
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.days != 0x7f {
            let days: Vec<&str> = (0..7).filter(|i| self.days & (1 << i) != 0).map(|i| DAYS[i]).collect();
            write!(f, "{} ", days.join(","))?;
        }
        let hm = |m: u16| format!("{:02}:{:02}", m / 60, m % 60);
        write!(f, "{}-{} UTC", hm(self.start), hm(self.end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-12-05 was a Saturday.
    const SAT_0000: u64 = 1_796_428_800;

    #[test]
    fn reads_and_opens() {
        let w: Window = "sat,sun 02:00-06:00".parse().unwrap();
        assert_eq!(w.to_string(), "sat,sun 02:00-06:00 UTC");
        assert!(!w.contains(SAT_0000 + 3600));
        assert!(w.contains(SAT_0000 + 2 * 3600));
        assert!(!w.contains(SAT_0000 + 6 * 3600));
        assert!(!w.contains(SAT_0000 + 2 * 86_400 + 3 * 3600), "monday");
        let night: Window = "fri 22:00-04:00".parse().unwrap();
        assert!(night.contains(SAT_0000 + 3 * 3600), "saturday morning is friday's night");
        assert!(!night.contains(SAT_0000 + 23 * 3600), "saturday night is not");
        assert!(night.contains(SAT_0000 - 3600));
        let daily: Window = "01:00-02:00".parse().unwrap();
        assert_eq!(daily.to_string(), "01:00-02:00 UTC");
        assert!(daily.contains(SAT_0000 + 5400));
        for bad in ["sat 02:00", "sat,noday 02:00-03:00", "25:00-26:00", "02:00-02:00", "2:0x-3:00"] {
            assert!(bad.parse::<Window>().is_err(), "{bad}");
        }
    }
}
