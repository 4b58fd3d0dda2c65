// A shop run by real frameworks from Debian's jars: a Spring context
// (beans from a plain class with @Bean methods and @PropertySource, which
// Spring 4.3 handles on JDK 17 where @Configuration's CGLIB fails) and a
// JPA persistence unit (EclipseLink over in-memory H2). The main thread
// loops in short sleeps so a debugger can park it; `checkout()` reports
// which path it took whenever that changes.

import java.util.List;
import javax.persistence.EntityManager;
import javax.persistence.EntityManagerFactory;
import javax.persistence.Persistence;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

public class Shop {
    /** The application's own context and EntityManager, as apps keep them. */
    static AnnotationConfigApplicationContext context;
    static EntityManager em;
    /** Missing until a debugger builds one. */
    static Coupon coupon;
    static String lastPath = "";

    public static void main(String[] args) throws Exception {
        context = new AnnotationConfigApplicationContext();
        context.register(ShopBeans.class);
        context.refresh();
        EntityManagerFactory emf = Persistence.createEntityManagerFactory("shop");
        em = emf.createEntityManager();
        em.getTransaction().begin();
        em.persist(new Product("P1", "Kettle", "kitchen", 30));
        em.persist(new Product("P2", "Toaster", "kitchen", 45));
        em.persist(new Product("P3", "Lamp", "living", 25));
        em.persist(new Product("P4", "Whisk", "kitchen", 5));
        em.getTransaction().commit();
        em.clear();
        System.out.println("READY");
        while (true) {
            Thread.sleep(20);
            checkout();
        }
    }

    static void checkout() {
        String path = coupon == null ? "no coupon" : "coupon " + coupon.code + " -" + coupon.percent + "%"; // LINE: checkout
        if (!path.equals(lastPath)) {
            lastPath = path;
            System.out.println("PATH " + path);
        }
    }

    static int countKitchen(List<Product> all) {
        return (int) all.stream().filter(p -> p.getCategory().equals("kitchen")).count();
    }
}
