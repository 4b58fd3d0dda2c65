// The Spring beans of the shop: a plain class with @Bean methods (not
// @Configuration) and the property source they read.
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.PropertySource;

@PropertySource("classpath:shop.properties")
public class ShopBeans {
    @Bean
    public PricingService pricingService(@Value("${shop.vat.percent}") int vat) {
        return new PricingService(vat);
    }

    @Bean
    public Greeter greeter() {
        return new Greeter();
    }
}
