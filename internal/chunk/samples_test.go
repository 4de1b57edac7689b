package chunk

// Small sources for each grammar, shared by the tests.

const goSample = `// Copyright 2024 The Authors.

// Package demo is a demo.
package demo

import (
	"fmt"
	"strings"
)

// MaxSize is the cap.
const MaxSize = 10

var registry = map[string]int{}

// Server serves.
type Server struct {
	Addr string
	n    int
}

// Handler handles.
type Handler interface {
	Handle(s string) error
}

// ServeHTTP serves a request.
// It is long.
func (s *Server) ServeHTTP(w string) {
	fmt.Println(w)
}

func parse(args []string) string {
	return strings.Join(args, " ")
}
`

const pySample = `"""Module doc."""
import os

DEFAULT = 3


# Parse the arguments.
def parse_args(argv):
    return argv[1:]


class Config(object):
    """Holds settings."""

    name = "x"

    def __init__(self, path):
        self.path = path

    # Load reads the file.
    @property
    def load(self):
        with open(self.path) as f:
            return f.read()


if __name__ == "__main__":
    parse_args(os.sys.argv)
`

const jsSample = `import React from "react";

/**
 * Adds numbers.
 */
export function add(a, b) {
  return a + b;
}

export const Button = ({ label }) => <button>{label}</button>;

class Store {
  items = [];

  // add pushes.
  add(x) {
    this.items.push(x);
  }
}

Store.prototype.size = function () {
  return this.items.length;
};

export default Store;
`

const tsSample = `import { X } from "./x";

/** A user. */
export interface User {
  id: number;
  name: string;
}

export type ID = string | number;

export enum Color { Red, Green }

// Service does things.
export class Service<T> {
  private cache: Map<string, T> = new Map();

  constructor(private readonly x: X) {}

  /** Get one. */
  async get(id: ID): Promise<T | undefined> {
    return this.cache.get(String(id));
  }
}

export const helper = async (u: User): Promise<void> => {
  console.log(u);
};
`

const tsxSample = `import * as React from "react";

interface Props { label: string }

export function Label(props: Props) {
  return <span className="label">{props.label}</span>;
}

export const Badge = (p: Props) => <b>{p.label as string}</b>;
`

const javaSample = `package com.example;

import java.util.List;

/**
 * A demo class.
 */
public class Demo {
    private final List<String> names;

    /** Builds one. */
    public Demo(List<String> names) {
        this.names = names;
    }

    // Counts names.
    @Override
    public int count() {
        return names.size();
    }

    interface Visitor {
        void visit(String s);
    }

    enum Mode { ON, OFF }
}
`

const mdSample = `# Title

Some text.

## Section

- item one
- item two
`

type sample struct {
	path, lang, src string
}

var samples = []sample{
	{"demo.go", "go", goSample},
	{"demo.py", "python", pySample},
	{"demo.js", "javascript", jsSample},
	{"demo.jsx", "jsx", jsSample},
	{"demo.ts", "typescript", tsSample},
	{"demo.tsx", "typescript", tsxSample},
	{"Demo.java", "java", javaSample},
	{"README.md", "markdown", mdSample},
}
