// Loaded twice, by two class loaders, from TwoLoaders: each copy has its
// own statics.
public class Plugin {
    public static String NAME = "unset";
}
