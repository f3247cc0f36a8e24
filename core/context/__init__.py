"""Context and position inside a real model: how contextual the vectors are (Ethayarajh 2019)."""
