"""`reducebench tune`: the search that writes the tuning tables `auto` reads."""
