//! `idgen-fault-node`: one idgen instance for the fault tests (see `idgen_faults::node`).

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let config = match idgen_faults::node::Config::from_env() {
        Ok(config) => config,
        Err(err) => {
            eprintln!("idgen-fault-node: {err}");
            std::process::exit(2);
        }
    };
    if let Err(err) = idgen_faults::node::run(config).await {
        eprintln!("idgen-fault-node: {err}");
        std::process::exit(1);
    }
}
