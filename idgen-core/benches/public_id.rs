//! Per-call cost of public IDs and UUIDv7: `PublicId` generation and text encode/decode,
//! `IdCodec` encode/decode, and our monotonic UUIDv7 against `uuid::Uuid::now_v7`.
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
    g.bench_function("new (OS CSPRNG)", |b| b.iter(PublicId::<Order>::new));
    let id = PublicId::<Order>::new();
    g.bench_function("to_string", |b| b.iter(|| black_box(&id).to_string()));
    let text = id.to_string();
    g.bench_function("parse", |b| {
        b.iter(|| black_box(&text).parse::<PublicId<Order>>())
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
    g.bench_function("uuid::Uuid::now_v7", |b| b.iter(uuid::Uuid::now_v7));
    g.bench_function("uuid::Uuid::new_v4", |b| b.iter(uuid::Uuid::new_v4));
    g.finish();
}

criterion_group!(benches, public_id, id_codec, uuid7);
criterion_main!(benches);
