// A JPA entity with a named query by category.
import javax.persistence.Entity;
import javax.persistence.Id;
import javax.persistence.NamedQuery;

@Entity
@NamedQuery(name = "Product.byCategory",
        query = "SELECT p FROM Product p WHERE p.category = :category ORDER BY p.sku")
public class Product {
    @Id
    private String sku;
    private String name;
    private String category;
    private int price;

    protected Product() {}

    public Product(String sku, String name, String category, int price) {
        this.sku = sku;
        this.name = name;
        this.category = category;
        this.price = price;
    }

    public String getCategory() {
        return category;
    }

    @Override
    public String toString() {
        return sku + " " + name;
    }
}
