// Test fixture (default package; compiled by tests/it/support/java.rs with `javac -g --release 17`).
// Classes to list members of and count instances of: a generic class Box with an inner class Lid
// (Box$Lid) and a static nested class Box$Label, a Widget and its subclass SpecialWidget. Keeps
// 3 Box, 5 Box$Lid and 7 Widget (+ 2 SpecialWidget, which a Widget count must not include)
// reachable, prints "counts Box=3 Box$Lid=5 Widget=7 SpecialWidget=2", and keeps running.
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

public class Shapes {
    static final List<Object> KEEP = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        int boxes = 0, lids = 0, widgets = 0, specials = 0;
        for (int i = 0; i < 3; i++) {
            Box<String> b = new Box<>("b" + i);
            KEEP.add(b);
            boxes++;
        }
        Box<String> first = (Box<String>) KEEP.get(0);
        for (int i = 0; i < 5; i++) {
            KEEP.add(first.new Lid(i));
            lids++;
        }
        for (int i = 0; i < 7; i++) {
            KEEP.add(new Widget());
            widgets++;
        }
        for (int i = 0; i < 2; i++) {
            KEEP.add(new SpecialWidget());
            specials++;
        }
        KEEP.add(new Box.Label());
        System.out.println("counts Box=" + boxes + " Box$Lid=" + lids + " Widget=" + widgets
                + " SpecialWidget=" + specials);
        while (true) {
            Thread.sleep(100);
        }
    }
}

class Box<T extends Comparable<T>> implements Comparable<Box<T>> {
    public static final String KIND = "box";
    private static int made;
    private final T content;
    protected volatile Map<String, List<T>> index;

    Box(T content) {
        this.content = content;
        made++;
    }

    public T content() {
        return content;
    }

    public static <U extends Comparable<U>> Box<U> of(U value, int copies) {
        return new Box<>(value);
    }

    public <R> List<R> mapAll(java.util.function.Function<? super T, ? extends R> f, R... extra) throws java.io.IOException {
        return new ArrayList<>();
    }

    @Override
    public int compareTo(Box<T> other) {
        return content.compareTo(other.content);
    }

    class Lid {
        final int size;

        Lid(int size) {
            this.size = size;
        }

        T owner() {
            return content;
        }
    }

    static class Label {
        String text = "label";
    }
}

class Widget {
    long serial;

    void spin(int times) {
    }
}

class SpecialWidget extends Widget {
    boolean special = true;
}
