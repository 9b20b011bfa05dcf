//! What happens when a counter outgrows its `pad` digits, and series: how a raw counter from
//! `db_key` (1, 2, 3, … forever, per period) becomes the sequence number an ID shows.
//!
//! The counter in `db_key` only ever grows; every policy is a pure function of it. That is
//! why cycles and series rollovers need no reset: nothing in the database is ever rewound.

/// The overflow policy of a spec: what comes after counter `10^pad - 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Overflow {
    /// `Error::Overflow`, naming the key and period (the default).
    #[default]
    Error,
    /// The counter grows by a digit: `999999` → `1000000` (the ID gets longer). Needs a date
    /// part of fixed width, so IDs stay unambiguous.
    Widen,
    /// Letters take over from the left, keeping the length, so IDs stay unique and, within a
    /// period, sort in issue order (digits sort before capital letters):
    /// `999999`, `A00000` … `Z99999`, `ZA0000` … `ZZ9999`, `ZZA000` … up to `ZZZZZZ`.
    Letters,
    /// After `max` the sequence starts again at 1: `1 … max, 1 … max, …`.
    ///
    /// **IDs repeat by design**, once every `max` numbers within a period: use it for ticket
    /// or queue numbers, never for keys that must be unique.
    Cycle {
        /// The largest sequence number, at most `10^pad - 1`.
        max: u64,
    },
}

/// Series rollover: `aa|1 … aa|max, bb|1 … bb|max, …`; when the last series is full, a clear
/// error. Built with [`SpecBuilder::series`](crate::SpecBuilder::series).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    pub(crate) codes: Vec<String>,
    pub(crate) max: u64,
}

impl Series {
    /// The series codes, in order.
    pub fn codes(&self) -> &[String] {
        &self.codes
    }

    /// The largest sequence number within one series.
    pub fn max(&self) -> u64 {
        self.max
    }
}

/// A raw counter as an ID shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shown {
    /// Index into the series codes.
    pub(crate) series: Option<usize>,
    /// The sequence number.
    pub(crate) seq: u64,
}

/// 10 to the power `exp`, for `exp` up to 19 (pads are at most [`MAX_PAD`](crate::MAX_PAD)).
pub(crate) fn pow10(exp: u32) -> u64 {
    // A table: the cached `i64` path asks for it once per ID.
    const POW10: [u64; 20] = {
        let mut table = [1; 20];
        let mut i = 1;
        while i < 20 {
            table[i] = table[i - 1] * 10;
            i += 1;
        }
        table
    };
    POW10[exp as usize]
}

/// How many raw counters a spec can show before it overflows.
pub(crate) fn capacity(pad: u32, overflow: Overflow, series: Option<&Series>) -> u64 {
    if let Some(series) = series {
        return series.max.saturating_mul(series.codes.len() as u64);
    }
    let digits = pow10(pad) - 1;
    match overflow {
        Overflow::Error => digits,
        Overflow::Widen | Overflow::Cycle { .. } => u64::MAX,
        Overflow::Letters => (1..=pad).fold(digits, |total, k| total + 26 * pow10(pad - k)),
    }
}

/// Which series and sequence number raw counter `counter` (1-based) shows.
pub(crate) fn show(counter: u64, overflow: Overflow, series: Option<&Series>) -> Shown {
    match (series, overflow) {
        (Some(series), _) => Shown {
            series: Some((counter.saturating_sub(1) / series.max) as usize),
            seq: counter.saturating_sub(1) % series.max + 1,
        },
        (None, Overflow::Cycle { max }) => Shown {
            series: None,
            seq: counter.saturating_sub(1) % max + 1,
        },
        (None, _) => Shown {
            series: None,
            seq: counter,
        },
    }
}

/// Writes sequence number `seq` as the policy shows it.
pub(crate) fn push_seq(out: &mut String, seq: u64, pad: u32, overflow: Overflow) {
    if overflow != Overflow::Letters || seq < pow10(pad) {
        return push_padded(out, seq, pad as usize);
    }
    let digits = pow10(pad);
    // Tier k (1..=pad): k-1 'Z's, one letter, then pad-k digits.
    let mut rest = seq - digits;
    for k in 1..=pad {
        let unit = pow10(pad - k);
        if rest < 26 * unit {
            out.extend(std::iter::repeat_n('Z', (k - 1) as usize));
            out.push(char::from(b'A' + (rest / unit) as u8));
            if k < pad {
                push_padded(out, rest % unit, (pad - k) as usize);
            }
            return;
        }
        rest -= 26 * unit;
    }
    // Past capacity: refused before formatting; fall back to digits rather than panic.
    push_padded(out, seq, pad as usize)
}

/// Reads a sequence number written by [`push_seq`]; `None` if `text` is not one.
pub(crate) fn read_seq(text: &str, pad: u32, overflow: Overflow) -> Option<u64> {
    let bytes = text.as_bytes();
    if bytes.is_empty() {
        return None;
    }
    if bytes.iter().all(u8::is_ascii_digit) {
        let wide_ok = overflow == Overflow::Widen;
        let len_ok = bytes.len() == pad as usize
            || (wide_ok && bytes.len() > pad as usize && bytes[0] != b'0');
        return if len_ok {
            text.parse().ok().filter(|&n| n > 0)
        } else {
            None
        };
    }
    if overflow != Overflow::Letters || bytes.len() != pad as usize {
        return None;
    }
    let k = bytes
        .iter()
        .position(|b| b.is_ascii_digit())
        .unwrap_or(bytes.len());
    if k == 0 {
        return None; // digits, then something else: a lettered counter starts with its letters
    }
    let (letters, digits) = bytes.split_at(k);
    if !letters[..k - 1].iter().all(|&b| b == b'Z') || !letters[k - 1].is_ascii_uppercase() {
        return None;
    }
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let k = k as u32;
    let below: u64 = (1..k).map(|j| 26 * pow10(pad - j)).sum();
    let unit = pow10(pad - k);
    let within = u64::from(letters[k as usize - 1] - b'A') * unit
        + if digits.is_empty() {
            0
        } else {
            std::str::from_utf8(digits).ok()?.parse::<u64>().ok()?
        };
    Some(pow10(pad) + below + within)
}

/// Appends `n` zero-padded to at least `pad` digits, without going through `fmt` (`itoa`:
/// this runs for every ID).
pub(crate) fn push_padded(out: &mut String, n: u64, pad: usize) {
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(n);
    out.extend(std::iter::repeat_n('0', pad.saturating_sub(digits.len())));
    out.push_str(digits);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(n: u64, pad: u32, overflow: Overflow) -> String {
        let mut s = String::new();
        push_seq(&mut s, n, pad, overflow);
        s
    }

    #[test]
    fn letters_keep_the_length_and_the_order() {
        let l = Overflow::Letters;
        let cases = [
            (999, "999"),
            (1000, "A00"),
            (1099, "A99"),
            (1100, "B00"),
            (3599, "Z99"),
            (3600, "ZA0"),
            (3859, "ZZ9"),
            (3860, "ZZA"),
            (3885, "ZZZ"),
        ];
        for (n, text) in cases {
            assert_eq!(seq(n, 3, l), text);
            assert_eq!(read_seq(text, 3, l), Some(n), "{text}");
        }
        assert_eq!(capacity(3, l, None), 3885);
        let all: Vec<String> = (1..=3885).map(|n| seq(n, 3, l)).collect();
        assert!(all.windows(2).all(|w| w[0] < w[1]), "sorted in issue order");
        assert!(all.iter().all(|s| s.len() == 3));
    }

    #[test]
    fn widen_cycle_and_series() {
        assert_eq!(seq(1_000_000, 6, Overflow::Widen), "1000000");
        assert_eq!(read_seq("1000000", 6, Overflow::Widen), Some(1_000_000));
        assert_eq!(read_seq("0100000", 6, Overflow::Widen), None);
        let cycle = Overflow::Cycle { max: 99 };
        assert_eq!(show(99, cycle, None).seq, 99);
        assert_eq!(show(100, cycle, None).seq, 1);
        let series = Series {
            codes: vec!["aa".into(), "bb".into()],
            max: 3,
        };
        let shown: Vec<_> = (1..=6)
            .map(|c| show(c, Overflow::Error, Some(&series)))
            .collect();
        assert_eq!(
            shown[2],
            Shown {
                series: Some(0),
                seq: 3
            }
        );
        assert_eq!(
            shown[3],
            Shown {
                series: Some(1),
                seq: 1
            }
        );
        assert_eq!(capacity(6, Overflow::Error, Some(&series)), 6);
    }

    #[test]
    fn pads_and_keeps_wider_counters_whole() {
        let mut s = String::new();
        push_padded(&mut s, 42, 6);
        assert_eq!(s, "000042");
        s.clear();
        push_padded(&mut s, 1234567, 3);
        assert_eq!(s, "1234567");
        s.clear();
        push_padded(&mut s, u64::MAX, 18);
        assert_eq!(s, u64::MAX.to_string());
    }
}
