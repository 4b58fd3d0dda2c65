// Fixture for tests/it/probe_refusals.rs: a class of the named module `probemod`. Prints
// "module worker started in probemod" from main, once Worker (the class the test probes) is
// loaded as a member of its module, then calls step every few milliseconds.
package pmod;

public class Worker {
    static long total;
    /** Written here and, in the modules-apart fixture, from the class path. */
    public static int level;

    static long step(long n) {
        long twice = n * 2; // LINE: module-line
        total += twice;
        level = (int) n;
        return twice;
    }

    public static void main(String[] args) throws Exception {
        System.out.println("module worker started in " + Worker.class.getModule().getName());
        long n = 0;
        while (true) {
            step(n++);
            Thread.sleep(5);
        }
    }
}
