//! Writes the Rust code of the `hearts.v1` protos: prost messages and the tonic client of
//! `TableService`.
//!
//! Usage: `hearts-client-codegen DESCRIPTOR_SET OUT_DIR`
//!
//! DESCRIPTOR_SET is a serialized `google.protobuf.FileDescriptorSet` of the files to generate and
//! their imports (with source info, for the doc comments), as `protoc --descriptor_set_out
//! --include_imports --include_source_info` writes it; scripts/generate-rust.sh makes it with the
//! protoc of grpcio-tools, so no protoc has to be installed. OUT_DIR receives one file per
//! package other than `google.*` (`hearts.v1.rs`). Well-known types map to `prost_types`.

use std::{env, fs, path::PathBuf, process::ExitCode};

use prost::Message;
use prost_types::FileDescriptorSet;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let [descriptor_set, out_dir] = args.as_slice() else {
        eprintln!("usage: hearts-client-codegen DESCRIPTOR_SET OUT_DIR");
        return ExitCode::from(2);
    };
    match generate(descriptor_set.into(), out_dir.into()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("hearts-client-codegen: {error}");
            ExitCode::FAILURE
        }
    }
}

fn generate(descriptor_set: PathBuf, out_dir: PathBuf) -> std::io::Result<()> {
    let bytes = fs::read(&descriptor_set)?;
    let mut fds = FileDescriptorSet::decode(bytes.as_slice())
        .map_err(|e| std::io::Error::other(format!("{}: {e}", descriptor_set.display())))?;
    // prost-build writes code for every file in the set. The google/api files are there only for
    // their options, which need no code; the google/protobuf ones stay because prost-build reads
    // the well-known messages, but they map to prost_types and give no file.
    fds.file.retain(|file| {
        let package = file.package();
        package == "google.protobuf" || !package.starts_with("google.")
    });
    fs::create_dir_all(&out_dir)?;

    let mut config = prost_build::Config::new();
    // `impl prost::Name` for every message, with the type URLs that google.rpc.Status details
    // carry (type.googleapis.com/hearts.v1.MoveRejection), so that `prost_types::Any::to_msg`
    // can decode them.
    config.enable_type_names();
    config.type_name_domain(["."], "type.googleapis.com");

    tonic_prost_build::configure()
        .build_client(true)
        .build_server(false)
        .build_transport(true)
        .emit_rerun_if_changed(false)
        .out_dir(&out_dir)
        .compile_fds_with_config(fds, config)
}
