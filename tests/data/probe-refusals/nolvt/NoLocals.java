// Fixture for tests/it/probe_refusals.rs, compiled there with -g:lines,source: line numbers but
// no LocalVariableTable, so a probe cannot name `sum`. Prints "no locals started" from main, once
// NoLocals (the class the test probes) is loaded, then calls add every few milliseconds.
public class NoLocals {
    static long total;

    static long add(long a, int b) {
        long sum = a + b; // LINE: nolvt-line
        total += sum;
        return sum;
    }

    public static void main(String[] args) throws Exception {
        System.out.println("no locals started");
        long n = 0;
        while (true) {
            add(n++, 3);
            Thread.sleep(5);
        }
    }
}
