//! `idgen-nemesis-node`: one issuing process of the nemesis's fleet (see `idgen_nemesis::node`).

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if let Err(err) = idgen_nemesis::node::run().await {
        eprintln!("idgen-nemesis-node: {err}");
        std::process::exit(1);
    }
}
