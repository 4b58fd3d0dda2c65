// Test fixture (default package): a worker that burns its CPU in bursts and waits between
// them, for the hot-threads sampling test. "bursty-worker" takes a job from a queue, then
// spends ~150 ms in crunch(); a feeder puts a job every 250 ms, so the worker waits on the
// queue about 40 % of the time and is seen there whenever a single stack is read at an
// arbitrary moment. Output: "bursty ready" once both threads run (printed once).
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

public class Bursty {
    static volatile long sink;

    static long crunch(long seed) {
        long x = seed;
        long end = System.nanoTime() + 150_000_000L;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 10_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L; // LINE: crunch
            }
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        BlockingQueue<Long> jobs = new ArrayBlockingQueue<>(1);
        java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(2);
        Thread worker = new Thread(() -> {
            started.countDown();
            try {
                while (true) {
                    sink = crunch(jobs.take());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "bursty-worker");
        worker.setDaemon(true);
        worker.start();
        Thread feeder = new Thread(() -> {
            started.countDown();
            long n = 0;
            try {
                while (true) {
                    jobs.put(++n);
                    Thread.sleep(250);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "bursty-feeder");
        feeder.setDaemon(true);
        feeder.start();
        started.await();
        System.out.println("bursty ready");
        Thread.currentThread().join();
    }
}
