//! Per-call cost of public IDs and UUIDv7: `PublicId` generation and text encode/decode beside
//! uuid's (with `fast-rng`, its fastest setting), `IdCodec` encode/decode, and our monotonic
//! UUIDv7 against `uuid::Uuid::now_v7`. The table with ratios, uuid without `fast-rng` and
//! instruction counts is `benches/per_id.rs` (see BENCHMARKS.md).
//!
//! Run: `cargo bench -p idgen-core --bench public_id`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use idgen_core::{CodecKey, IdCodec, PublicId, PublicIdPrefix, Uuid7Generator};

struct Order;
impl PublicIdPrefix for Order {
    const PREFIX: &'static str = "ord";
}

fn public_id(c: &mut Criterion) {
    let mut g = c.benchmark_group("public_id");
    g.bench_function("new (per-thread ChaCha12)", |b| {
        b.iter(PublicId::<Order>::new)
    });
    g.bench_function("peer: uuid new_v4 (fast-rng)", |b| {
        b.iter(uuid::Uuid::new_v4)
    });
    let id = PublicId::<Order>::new();
    let uuid = uuid::Uuid::new_v4();
    g.bench_function("to_string", |b| b.iter(|| black_box(&id).to_string()));
    g.bench_function("peer: uuid to_string (hyphenated)", |b| {
        b.iter(|| black_box(&uuid).to_string())
    });
    let mut buf = [0u8; idgen_core::public_id::MAX_TEXT_LEN];
    g.bench_function("encode_to (no allocation)", |b| {
        b.iter(|| black_box(black_box(&id).encode_to(&mut buf)).len())
    });
    let mut uuid_buf = uuid::Uuid::encode_buffer();
    g.bench_function("peer: uuid hyphenated encode_lower (no allocation)", |b| {
        b.iter(|| black_box(&*black_box(&uuid).hyphenated().encode_lower(&mut uuid_buf)).len())
    });
    let text = id.to_string();
    g.bench_function("parse", |b| {
        b.iter(|| black_box(&text).parse::<PublicId<Order>>())
    });
    let uuid_text = uuid.hyphenated().to_string();
    g.bench_function("peer: uuid parse_str (hyphenated)", |b| {
        b.iter(|| uuid::Uuid::parse_str(black_box(&uuid_text)))
    });
    g.finish();
}

fn id_codec(c: &mut Criterion) {
    let mut g = c.benchmark_group("id_codec");
    let key = CodecKey::from_hex(&"0f1e2d3c4b5a6978".repeat(4)).unwrap();
    let codec = IdCodec::new(0, key);
    let id = 112_719_806_108_546_862_i64;
    g.bench_function("encode", |b| {
        b.iter(|| codec.encode::<Order>(black_box(id)).unwrap())
    });
    let token = codec.encode::<Order>(id).unwrap();
    g.bench_function("decode (1 key)", |b| {
        b.iter(|| codec.decode::<Order>(black_box(&token)))
    });
    let mut rotated = IdCodec::new(
        0,
        CodecKey::from_hex(&"1f1e2d3c4b5a6978".repeat(4)).unwrap(),
    );
    for s in 1..4u8 {
        let hex = format!("{s:02x}{}", &"0f1e2d3c4b5a6978".repeat(4)[2..]);
        rotated
            .rotate(s, CodecKey::from_hex(&hex).unwrap())
            .unwrap();
    }
    let token4 = rotated.encode::<Order>(id).unwrap();
    g.bench_function("decode (4 keys)", |b| {
        b.iter(|| rotated.decode::<Order>(black_box(&token4)))
    });
    // For reference: the bare cipher call inside each encode/decode.
    {
        use aes::cipher::{Array, BlockCipherDecrypt, KeyInit};
        let aes = aes::Aes256::new(&Array::from([7u8; 32]));
        let mut block = Array::from([1u8; 16]);
        g.bench_function("raw AES-256 block decrypt", |b| {
            b.iter(|| aes.decrypt_block(black_box(&mut block)))
        });
    }
    let forged = "ord_0000000000000000000000000z";
    g.bench_function("decode forged (1 key)", |b| {
        b.iter(|| codec.decode::<Order>(black_box(forged)))
    });
    g.finish();
}

fn uuid7(c: &mut Criterion) {
    let mut g = c.benchmark_group("uuid7");
    let ours = Uuid7Generator::new();
    g.bench_function("Uuid7Generator::next_uuid", |b| b.iter(|| ours.next_uuid()));
    g.bench_function("peer: uuid now_v7 (fast-rng)", |b| {
        b.iter(uuid::Uuid::now_v7)
    });
    g.bench_function("peer: ulid Generator", |b| {
        let mut ulids = ulid::Generator::new();
        b.iter(|| black_box(ulids.generate().map(u128::from).ok()))
    });
    g.finish();
}

criterion_group!(benches, public_id, id_codec, uuid7);
criterion_main!(benches);
