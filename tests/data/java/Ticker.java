// Test fixture (default package; compiled by tests/it/support/java.rs with `javac -g --release 17`).
// Prints "ticker started" as the first statement of main, then "tick N" (N = 1, 2, ...) every 50 ms.
// A JVM started with suspend=y has not run main while "ticker started" is absent; advancing
// "tick N" lines prove a JVM keeps running. Optional argument: stop after that many ticks and
// print "ticker done" (default: tick forever).
public class Ticker {
    static volatile long ticks = 0;

    public static void main(String[] args) throws InterruptedException {
        System.out.println("ticker started"); // LINE: ticker-started
        long limit = args.length > 0 ? Long.parseLong(args[0]) : Long.MAX_VALUE;
        while (ticks < limit) {
            Thread.sleep(50);
            ticks++;
            System.out.println("tick " + ticks); // LINE: tick
        }
        System.out.println("ticker done");
    }
}
