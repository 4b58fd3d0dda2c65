// A Spring bean whose quote takes a String, an int and a Map, so a
// debugger must build each argument from JSON.
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;

public class PricingService {
    public enum Tier { BRONZE, SILVER, GOLD }

    private final int vat;

    public PricingService(int vat) {
        this.vat = vat;
    }

    /** Net price times quantity, less `discount` percent from the options, plus VAT. */
    public String quote(String sku, int quantity, Map<String, Object> options) {
        int unit = sku.equals("P1") ? 30 : 10;
        Object d = options.get("discount");
        int discount = d == null ? 0 : ((Number) d).intValue();
        long cents = (long) unit * quantity * 100 * (100 - discount) / 100 * (100 + vat) / 100;
        return sku + " x" + quantity + " = " + BigDecimal.valueOf(cents, 2) + " (" + options.get("note") + ")";
    }

    public int quote(String sku, long quantity) {
        return (int) quantity;
    }

    public int quote(String sku, Integer quantity) {
        return quantity + 1000;
    }

    public String describe(String sku) {
        return "sku " + sku;
    }

    public String describe(Integer id) {
        return "id " + id;
    }

    public String tiers(Tier tier, List<Integer> amounts, int[] extra, Integer boxed, double rate) {
        int sum = 0;
        for (int a : amounts) sum += a;
        for (int e : extra) sum += e;
        return tier + ":" + sum + ":" + boxed + ":" + rate;
    }

    /** Takes `ms` to answer, for the call budget. */
    public static String slow(int ms) throws InterruptedException {
        Thread.sleep(ms);
        return "slept " + ms;
    }

    public static String version() {
        return "pricing-1";
    }
}
