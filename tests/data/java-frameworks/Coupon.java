// A value the shop's checkout reads; built by a debugger with `new`.
public class Coupon {
    final String code;
    final int percent;

    public Coupon(String code, int percent) {
        this.code = code;
        this.percent = percent;
    }

    public Coupon(String code) {
        this(code, 5);
    }
}
