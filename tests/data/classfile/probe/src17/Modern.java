import java.util.List;

/** Java 17 shapes for the probe engine: records, switch expressions, patterns, text blocks. */
public class Modern {
    record Point(int x, long y) {
        Point {
            if (x < 0) {
                throw new IllegalArgumentException("x");
            }
        }

        long sum() {
            return x + y;
        }
    }

    sealed interface Shape permits Square, Circle {}

    record Square(double side) implements Shape {}

    record Circle(double r) implements Shape {}

    static double area(Shape s) {
        if (s instanceof Square sq) {
            return sq.side() * sq.side();
        } else if (s instanceof Circle c) {
            return 3 * c.r() * c.r();
        }
        return 0;
    }

    static String kind(int k) {
        return switch (k) {
            case 0, 1 -> "small";
            case 2 -> {
                String t = "two";
                yield t.toUpperCase();
            }
            default -> "many " + k;
        };
    }

    static String text() {
        var block = """
            a
            b""";
        var parts = List.of(block.split("\n"));
        return String.join("+", parts);
    }

    public static void main(String[] args) {
        Point p = new Point(2, 40L);
        System.out.println("point " + p.sum() + " " + p);
        System.out.println("area " + area(new Square(2)) + " " + area(new Circle(1)));
        System.out.println("kind " + kind(1) + " " + kind(2) + " " + kind(9));
        System.out.println("text " + text());
        try {
            new Point(-1, 0);
        } catch (IllegalArgumentException e) {
            System.out.println("refused " + e.getMessage());
        }
    }
}
