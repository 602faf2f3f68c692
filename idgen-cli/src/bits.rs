//! The 63 bits of an ID, field by field: values, positions, letters, and the drawing.

use idgen_core::{FieldOrder, Layout, SnowflakeId};

/// What a run of bits holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Bits above the layout's fields (always 0 in an ID of the layout).
    Unused,
    /// The timestamp.
    Timestamp,
    /// The `n`th node sub-field (0 is the most significant).
    Node(usize),
    /// The sequence.
    Sequence,
}

/// One field of an ID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Field {
    /// What it holds.
    pub(crate) kind: Kind,
    /// `timestamp`, `sequence`, a node sub-field's name, or `unused`.
    pub(crate) name: &'static str,
    /// The letter that marks its bits in plain output.
    pub(crate) letter: char,
    /// Its width.
    pub(crate) bits: u8,
    /// The position of its lowest bit.
    pub(crate) shift: u8,
    /// Its value in the ID.
    pub(crate) value: u64,
}

impl Field {
    /// Its bits, most significant first, as `0`/`1`.
    pub(crate) fn binary(&self) -> String {
        (0..self.bits)
            .rev()
            .map(|i| if self.value >> i & 1 == 1 { '1' } else { '0' })
            .collect()
    }
}

/// The fields of `id` under `layout`, most significant first, covering bits 62..=0 (the sign bit
/// is always 0 and not shown).
pub(crate) fn fields(layout: &Layout, id: SnowflakeId) -> Vec<Field> {
    let raw = id.as_u64();
    let node_bits = layout.node_bits();
    let seq_bits = layout.sequence_bits();
    let (node_shift, seq_shift) = match layout.order() {
        FieldOrder::TimeNodeSequence => (seq_bits, 0),
        FieldOrder::TimeSequenceNode => (0, node_bits),
    };
    let mut out = Vec::new();
    let mut taken = vec!['T', 'S', '-'];
    let mut push = |kind, name, letter, bits: u8, shift: u8| {
        if bits > 0 {
            let value = (raw >> shift) & ((1u64 << bits) - 1);
            out.push(Field {
                kind,
                name,
                letter,
                bits,
                shift,
                value,
            });
        }
    };
    let total = layout.total_bits();
    push(Kind::Unused, "unused", '-', 63 - total, total);
    push(
        Kind::Timestamp,
        "timestamp",
        'T',
        layout.timestamp_bits(),
        node_bits + seq_bits,
    );
    let mut node_fields = Vec::new();
    let mut top = node_shift + node_bits;
    for (i, f) in layout.node_fields().iter().enumerate() {
        top -= f.bits;
        let letter = letter_for(f.name, &mut taken);
        node_fields.push((Kind::Node(i), f.name, letter, f.bits, top));
    }
    let sequence = (Kind::Sequence, "sequence", 'S', seq_bits, seq_shift);
    if layout.order() == FieldOrder::TimeSequenceNode {
        node_fields.insert(0, sequence);
    } else {
        node_fields.push(sequence);
    }
    for (kind, name, letter, bits, shift) in node_fields {
        push(kind, name, letter, bits, shift);
    }
    out
}

/// The first letter of `name` not yet taken (upper case), else a digit.
fn letter_for(name: &str, taken: &mut Vec<char>) -> char {
    let letter = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_uppercase())
        .chain('1'..='9')
        .find(|c| !taken.contains(c))
        .unwrap_or('?');
    taken.push(letter);
    letter
}

/// ANSI style (SGR parameters) of a field's blocks.
fn style(kind: Kind) -> &'static str {
    match kind {
        Kind::Unused => "97;100",
        Kind::Timestamp => "1;97;44",
        Kind::Node(i) => ["30;42", "30;43", "30;46", "97;45"][i % 4],
        Kind::Sequence => "1;97;41",
    }
}

fn paint(kind: Kind, text: &str) -> String {
    format!("\x1b[{}m{text}\x1b[0m", style(kind))
}

/// The drawing: the bits grouped by field, then (plain) a line of field letters under them, then
/// a legend. With `colour`, each field's bits are a block of its own ANSI colour and the legend
/// names the colours; without, only plain ASCII.
pub(crate) fn draw(fields: &[Field], colour: bool) -> Vec<String> {
    let bits_line: Vec<String> = fields
        .iter()
        .map(|f| {
            if colour {
                paint(f.kind, &f.binary())
            } else {
                f.binary()
            }
        })
        .collect();
    let legend: Vec<String> = fields
        .iter()
        .map(|f| {
            if colour {
                paint(f.kind, &format!(" {} {} ", f.name, f.bits))
            } else {
                format!("{}={} {}", f.letter, f.name, f.bits)
            }
        })
        .collect();
    let mut lines = vec![bits_line.join(" ")];
    if !colour {
        let letters: Vec<String> = fields
            .iter()
            .map(|f| f.letter.to_string().repeat(usize::from(f.bits)))
            .collect();
        lines.push(letters.join(" "));
    }
    lines.push(legend.join("  "));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(v: i64) -> SnowflakeId {
        SnowflakeId::new(v).unwrap()
    }

    #[test]
    fn twitter_fields_cover_63_bits_and_hold_the_decomposed_values() {
        let fs = fields(&Layout::TWITTER, id(2116500430648709162));
        let summary: Vec<_> = fs
            .iter()
            .map(|f| (f.name, f.letter, f.bits, f.shift, f.value))
            .collect();
        assert_eq!(
            summary,
            [
                ("timestamp", 'T', 41, 22, 504613025343),
                ("datacenter", 'D', 5, 17, 3),
                ("worker", 'W', 5, 12, 17),
                ("sequence", 'S', 12, 0, 42),
            ]
        );
        let bits: String = fs.iter().map(Field::binary).collect();
        assert_eq!(bits, format!("{:063b}", 2116500430648709162u64));
    }

    #[test]
    fn sonyflake_puts_the_sequence_above_the_machine() {
        let fs = fields(&Layout::SONYFLAKE, id(96902515261901317));
        let summary: Vec<_> = fs
            .iter()
            .map(|f| (f.name, f.letter, f.shift, f.value))
            .collect();
        assert_eq!(
            summary,
            [
                ("timestamp", 'T', 24, 5_775_840_000),
                ("sequence", 'S', 16, 7),
                ("machine", 'M', 0, 2565),
            ]
        );
    }

    #[test]
    fn narrow_layouts_show_unused_bits_and_letters_stay_unique() {
        let layout = Layout::builder()
            .timestamp_bits(30)
            .node_field("shard", 4)
            .node_field("s2", 4)
            .sequence_bits(5)
            .build()
            .unwrap();
        let fs = fields(&layout, id(0b1011));
        let letters: Vec<_> = fs.iter().map(|f| (f.name, f.letter, f.bits)).collect();
        assert_eq!(
            letters,
            [
                ("unused", '-', 20),
                ("timestamp", 'T', 30),
                ("shard", 'H', 4),
                ("s2", '2', 4),
                ("sequence", 'S', 5),
            ]
        );
        assert_eq!(fs.iter().map(|f| u32::from(f.bits)).sum::<u32>(), 63);
    }

    #[test]
    fn plain_drawing_is_ascii_with_letters_under_bits() {
        let lines = draw(&fields(&Layout::TWITTER, id(2116500430648709162)), false);
        assert_eq!(lines.len(), 3);
        assert!(lines.iter().all(|l| l.is_ascii() && !l.contains('\x1b')));
        assert_eq!(lines[0].len(), lines[1].len());
        assert!(lines[0].ends_with(" 00011 10001 000000101010"));
        assert!(lines[1].ends_with(" DDDDD WWWWW SSSSSSSSSSSS"));
        assert_eq!(
            lines[2],
            "T=timestamp 41  D=datacenter 5  W=worker 5  S=sequence 12"
        );
    }

    #[test]
    fn coloured_drawing_wraps_each_field_in_its_colour() {
        let lines = draw(&fields(&Layout::TWITTER, id(2116500430648709162)), true);
        assert_eq!(lines.len(), 2);
        assert!(lines[0].contains("\x1b[30;42m00011\x1b[0m"));
        assert!(lines[0].contains("\x1b[1;97;41m000000101010\x1b[0m"));
        assert!(lines[1].contains("\x1b[30;43m worker 5 \x1b[0m"));
    }
}
