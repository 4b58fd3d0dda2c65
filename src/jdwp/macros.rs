//! The declarative macros the command-set files are written with: wire
//! structs, commands, numbered enums and bit-flag sets. Each expands to the
//! type plus its `Encode`/`Decode` (fields in declaration order, which is
//! wire order) and, under test, its `Arb` generator.

/// A struct whose fields are encoded one after another, in order.
///
/// ```text
/// wire_struct! {
///     /// doc
///     #[derive(Debug, Clone, PartialEq, Eq)]
///     pub struct LineEntry { pub line_code_index: i64, pub line_number: i32 }
/// }
/// ```
macro_rules! wire_struct {
    ($(#[$m:meta])* pub struct $name:ident {
        $($(#[$fm:meta])* pub $f:ident : $t:ty),+ $(,)?
    }) => {
        $(#[$m])*
        pub struct $name { $($(#[$fm])* pub $f: $t,)+ }

        impl $crate::command::Encode for $name {
            fn encode(&self, w: &mut $crate::wire::Writer) {
                $($crate::command::Encode::encode(&self.$f, w);)+
            }
        }

        impl $crate::command::Decode for $name {
            fn decode(
                r: &mut $crate::wire::Reader<'_>,
            ) -> Result<Self, $crate::wire::DecodeError> {
                Ok(Self { $($f: $crate::command::Decode::decode(r)?,)+ })
            }
            fn min_len(sizes: $crate::wire::IdSizes) -> usize {
                0 $(+ <$t as $crate::command::Decode>::min_len(sizes))+
            }
        }

        #[cfg(test)]
        impl $crate::testing::Arb for $name {
            fn arb(g: &mut $crate::testing::Gen<'_>) -> Self {
                Self { $($f: $crate::testing::Arb::arb(g),)+ }
            }
        }
    };
}

/// Commands: the struct (its fields are the request data, in order), its
/// `Command` impl and its `Decode` impl (reading the request back).
///
/// ```text
/// command! {
///     /// ReferenceType.Signature (2/1).
///     #[derive(Debug, Clone, Copy, PartialEq, Eq)]
///     pub struct Signature { pub ref_type: ReferenceTypeId }
///     => (0x02, 0x01, "ReferenceType.Signature") -> String;
///
///     /// A command without request data: a unit struct, derives added.
///     pub struct HoldEvents; => (0x01, 0x0F, "VirtualMachine.HoldEvents") -> ();
/// }
/// ```
///
/// A set whose command needs a hand-written `Command` impl starts with
/// `also Name;` so that it still joins the set's `COMMANDS` table:
///
/// ```text
/// command! { also SetValues; pub struct Length { … } => (0x0D, 0x01, …) -> i32; }
/// ```
macro_rules! command {
    ($(also $($extra:ident),+;)?
     $($(#[$m:meta])* pub struct $name:ident $body:tt
       => ($set:literal, $id:literal, $cname:literal) -> $reply:ty;)*) => {
        $(command!(@one $(#[$m])* pub struct $name $body => ($set, $id, $cname) -> $reply);)*

        /// Every command of this set, `(set, command, "Set.Command")`: the
        /// one table of command numbers, read by `command_name`. Commands
        /// whose `Command` impl is written by hand (`also …`) join it
        /// through their own constants.
        pub const COMMANDS: &[(u8, u8, &str)] = &[
            $(($set, $id, $cname),)*
            $($((
                <$extra as $crate::command::Command>::SET,
                <$extra as $crate::command::Command>::ID,
                <$extra as $crate::command::Command>::NAME,
            ),)+)?
        ];
    };

    (@one $(#[$m:meta])* pub struct $name:ident ;
     => ($set:literal, $id:literal, $cname:literal) -> $reply:ty) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name;

        impl $crate::command::Command for $name {
            const SET: u8 = $set;
            const ID: u8 = $id;
            const NAME: &'static str = $cname;
            type Reply = $reply;
            fn encode(&self, _: &mut $crate::wire::Writer) {}
        }

        impl $crate::command::Decode for $name {
            fn decode(
                _: &mut $crate::wire::Reader<'_>,
            ) -> Result<Self, $crate::wire::DecodeError> {
                Ok($name)
            }
        }

        #[cfg(test)]
        impl $crate::testing::Arb for $name {
            fn arb(_: &mut $crate::testing::Gen<'_>) -> Self {
                $name
            }
        }
    };

    (@one $(#[$m:meta])* pub struct $name:ident {
        $($(#[$fm:meta])* pub $f:ident : $t:ty),+ $(,)?
     }
     => ($set:literal, $id:literal, $cname:literal) -> $reply:ty) => {
        $(#[$m])*
        pub struct $name { $($(#[$fm])* pub $f: $t,)+ }

        impl $crate::command::Command for $name {
            const SET: u8 = $set;
            const ID: u8 = $id;
            const NAME: &'static str = $cname;
            type Reply = $reply;
            fn encode(&self, w: &mut $crate::wire::Writer) {
                $($crate::command::Encode::encode(&self.$f, w);)+
            }
        }

        impl $crate::command::Decode for $name {
            fn decode(
                r: &mut $crate::wire::Reader<'_>,
            ) -> Result<Self, $crate::wire::DecodeError> {
                Ok(Self { $($f: $crate::command::Decode::decode(r)?,)+ })
            }
            fn min_len(sizes: $crate::wire::IdSizes) -> usize {
                0 $(+ <$t as $crate::command::Decode>::min_len(sizes))+
            }
        }

        #[cfg(test)]
        impl $crate::testing::Arb for $name {
            fn arb(g: &mut $crate::testing::Gen<'_>) -> Self {
                Self { $($f: $crate::testing::Arb::arb(g),)+ }
            }
        }
    };
}

/// A fieldless enum carried as a number of type `$repr` (`u8` or `i32`);
/// unknown numbers decode to `DecodeError::Unknown`.
macro_rules! wire_enum {
    ($(#[$m:meta])* pub enum $name:ident : $repr:ident {
        $($(#[$vm:meta])* $variant:ident = $value:literal),+ $(,)?
    }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vm])* $variant = $value,)+ }

        impl $name {
            /// Every variant, in specification order.
            pub const VARIANTS: &'static [$name] = &[$($name::$variant,)+];

            /// The number on the wire.
            pub fn raw(self) -> $repr {
                self as $repr
            }

            /// The variant with this number.
            pub fn from_raw(raw: $repr) -> Result<Self, $crate::wire::DecodeError> {
                match raw {
                    $($value => Ok($name::$variant),)+
                    other => Err($crate::wire::DecodeError::Unknown {
                        what: stringify!($name),
                        value: other as u64,
                    }),
                }
            }
        }

        impl $crate::command::Encode for $name {
            fn encode(&self, w: &mut $crate::wire::Writer) {
                $crate::command::Encode::encode(&self.raw(), w);
            }
        }

        impl $crate::command::Decode for $name {
            fn decode(
                r: &mut $crate::wire::Reader<'_>,
            ) -> Result<Self, $crate::wire::DecodeError> {
                $name::from_raw(<$repr as $crate::command::Decode>::decode(r)?)
            }
            fn min_len(sizes: $crate::wire::IdSizes) -> usize {
                <$repr as $crate::command::Decode>::min_len(sizes)
            }
        }

        #[cfg(test)]
        impl $crate::testing::Arb for $name {
            fn arb(g: &mut $crate::testing::Gen<'_>) -> Self {
                g.pick($name::VARIANTS)
            }
        }
    };
}

/// A set of bit flags carried as a JDWP `int`. Unknown bits are kept.
macro_rules! wire_flags {
    ($(#[$m:meta])* pub struct $name:ident {
        $($(#[$fm:meta])* const $flag:ident = $value:literal;)+
    }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name(pub i32);

        impl $name {
            $($(#[$fm])* pub const $flag: $name = $name($value);)+

            /// No flag set.
            pub const EMPTY: $name = $name(0);

            /// True when every bit of `other` is set here.
            pub fn contains(self, other: $name) -> bool {
                self.0 & other.0 == other.0
            }
        }

        impl std::ops::BitOr for $name {
            type Output = $name;
            fn bitor(self, rhs: $name) -> $name {
                $name(self.0 | rhs.0)
            }
        }

        impl $crate::command::Encode for $name {
            fn encode(&self, w: &mut $crate::wire::Writer) {
                w.i32(self.0);
            }
        }

        impl $crate::command::Decode for $name {
            fn decode(
                r: &mut $crate::wire::Reader<'_>,
            ) -> Result<Self, $crate::wire::DecodeError> {
                Ok($name(r.i32()?))
            }
            fn min_len(_: $crate::wire::IdSizes) -> usize {
                4
            }
        }

        #[cfg(test)]
        impl $crate::testing::Arb for $name {
            fn arb(g: &mut $crate::testing::Gen<'_>) -> Self {
                $name(g.i32())
            }
        }
    };
}
