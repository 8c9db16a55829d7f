//! Options written as text on the command line and in config files (`Z0:Z1:V`,
//! `Z:X0:X1:STEP`, `off|auto|K|K:B|K:BxW`): their parsers, and their serde as strings.

use ppstencil::receivers::ReceiverLine;
use ppstencil::solver::{Layer, TimeBlock};

/// A value written as text on the command line and in config files (`Z0:Z1:V`,
/// `Z:X0:X1:STEP`).
pub trait TextArg: Sized {
    /// Parses the text; the error says the expected format.
    fn parse_text(s: &str) -> Result<Self, String>;
    /// The text that parses back to this value.
    fn to_text(&self) -> String;
}

impl TextArg for Layer {
    fn parse_text(s: &str) -> Result<Self, String> {
        parse_layer(s)
    }
    fn to_text(&self) -> String {
        format!("{}:{}:{}", self.z0, self.z1, self.velocity)
    }
}

impl TextArg for ReceiverLine {
    fn parse_text(s: &str) -> Result<Self, String> {
        parse_receivers(s)
    }
    fn to_text(&self) -> String {
        match self.y {
            Some(y) => format!("{}:{y}:{}:{}:{}", self.z, self.x0, self.x1, self.step),
            None => format!("{}:{}:{}:{}", self.z, self.x0, self.x1, self.step),
        }
    }
}

impl TextArg for TimeBlock {
    fn parse_text(s: &str) -> Result<Self, String> {
        parse_time_block(s)
    }
    fn to_text(&self) -> String {
        self.name()
    }
}

/// Parses `--time-block off|auto|K|K:B|K:BxW`.
pub fn parse_time_block(s: &str) -> Result<TimeBlock, String> {
    s.parse::<TimeBlock>().map_err(|e| match e {
        ppstencil::Error::InvalidParameter { valid, .. } => valid.to_string(),
        other => other.to_string(),
    })
}

/// Serde for `Option<T: TextArg>` as one string (a whole number is read as its digits).
pub(super) mod text_one {
    use super::TextArg;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer, T: TextArg>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_str(&v.to_text()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: TextArg>(d: D) -> Result<Option<T>, D::Error> {
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = String;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or a whole number")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
                Ok(v.to_string())
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<String, E> {
                Ok(v.to_string())
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<String, E> {
                Ok(v.to_string())
            }
        }
        let text = d.deserialize_any(Text)?;
        T::parse_text(&text)
            .map(Some)
            .map_err(serde::de::Error::custom)
    }
}

/// Serde for `Option<Vec<T: TextArg>>` as an array of strings.
pub(super) mod text_list {
    use super::TextArg;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer, T: TextArg>(
        v: &Option<Vec<T>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let texts: Vec<String> = v.iter().flatten().map(TextArg::to_text).collect();
        s.collect_seq(texts)
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: TextArg>(
        d: D,
    ) -> Result<Option<Vec<T>>, D::Error> {
        let texts = Vec::<String>::deserialize(d)?;
        texts
            .iter()
            .map(|t| T::parse_text(t).map_err(serde::de::Error::custom))
            .collect::<Result<Vec<T>, _>>()
            .map(Some)
    }
}

/// Parses `Z:X0:X1:STEP` (a line of receivers); the grid check happens in `run::plan`.
pub fn parse_receivers(s: &str) -> Result<ReceiverLine, String> {
    s.parse::<ReceiverLine>().map_err(|e| match e {
        ppstencil::Error::InvalidParameter { valid, .. } => valid,
        other => other.to_string(),
    })
}

/// Parses `Z0:Z1:V` (a layer: rows `[Z0, Z1)` get velocity `V`). Range checks against the
/// grid happen later, in `WaveConfig::validate`.
pub fn parse_layer(s: &str) -> Result<Layer, String> {
    let expected = "expected Z0:Z1:V (rows [Z0, Z1) get velocity V in m/s), e.g. 750:1125:3000";
    let parts: Vec<&str> = s.split(':').collect();
    let [z0, z1, v] = parts.as_slice() else {
        return Err(format!(
            "{expected}; `{s}` has {} part(s), not 3",
            parts.len()
        ));
    };
    let row = |t: &str, what: &str| {
        t.trim().parse::<usize>().map_err(|_| {
            format!("{expected}; {what} = `{t}` is not a row number (a whole number >= 0)")
        })
    };
    let z0 = row(z0, "Z0")?;
    let z1 = row(z1, "Z1")?;
    let velocity = v
        .trim()
        .parse::<f64>()
        .map_err(|_| format!("{expected}; V = `{v}` is not a number"))?;
    Ok(Layer { z0, z1, velocity })
}
