// Test fixture (default package; compiled by tests/it/support/java.rs with `javac -g --release 17`).
// Writes known lines for reading a launched JVM's output: first one line of 10,000 'x' on stdout,
// then "chatter out N" on stdout for N = 1..<count> (first argument, default 20), and
// "chatter err N" on stderr for every N divisible by 10, then "chatter done". With a second
// argument it then exits with that code; without one it prints "chatter tick K" every 100 ms.
public class Chatter {
    public static void main(String[] args) throws InterruptedException {
        int count = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        System.out.println("x".repeat(10_000));
        for (int n = 1; n <= count; n++) {
            System.out.println("chatter out " + n);
            if (n % 10 == 0) {
                System.out.flush();
                System.err.println("chatter err " + n);
                System.err.flush();
            }
        }
        System.out.println("chatter done");
        System.out.flush();
        if (args.length > 1) {
            System.exit(Integer.parseInt(args[1]));
        }
        for (long k = 1; ; k++) {
            Thread.sleep(100);
            System.out.println("chatter tick " + k);
        }
    }
}
