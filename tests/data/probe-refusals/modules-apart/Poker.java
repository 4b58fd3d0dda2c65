// Fixture for tests/it/probe_refusals.rs: a class-path class (the unnamed
// module) that writes a public field of pmod.Worker, a class of the named
// module `probemod`, while Worker's own loop writes it too. Both are loaded
// by the application class loader, in two modules. Prints "poker started"
// once both classes are loaded.
public class Poker {
    public static void main(String[] args) throws Exception {
        Thread worker = new Thread(() -> {
            try {
                pmod.Worker.main(new String[0]);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "module-worker");
        worker.setDaemon(true);
        worker.start();
        pmod.Worker.level = -1;
        System.out.println("poker started");
        while (true) {
            pmod.Worker.level = -1; // LINE: poke
            Thread.sleep(5);
        }
    }
}
