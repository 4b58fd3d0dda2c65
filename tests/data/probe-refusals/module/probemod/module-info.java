// Fixture for tests/it/probe_refusals.rs: a named module, compiled there with
// `javac -g --module-source-path` and run from the module path.
module probemod {
    exports pmod;
}
